# mistake: a pool of `limit` worker tasks, each running job after job inline under its own asyncio.timeout(job_timeout) (told apart from a job's own TimeoutError by expired()); the timeout stays armed after the final cancel, so when it expires during a job's cleanup it cuts the cleanup short and first_results ends early (until session 27 it was also rejected for absorbing a cancel that arrives during its cleanup, a case Exercise 4.1 no longer asks for)
# violates: ended before the jobs it cancelled had finished their cleanup
# from: red team of session 14, who saw the statement only and sent it as correct (its own harness did not cancel during cleanup)
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    results: list = []
    errors: list[BaseException] = []
    over = asyncio.Event()
    next_job = 0

    async def worker() -> None:
        nonlocal next_job
        while len(results) < wanted and not errors:
            i = next_job
            next_job += 1
            deadline = asyncio.timeout(job_timeout)
            try:
                async with deadline:
                    value = await start_work(i)
            except TimeoutError as exc:
                if deadline.expired():
                    continue  # cancelled at its deadline, cleanup done: no result
                errors.append(exc)
                over.set()
                return
            except Exception as exc:
                errors.append(exc)
                over.set()
                return
            if len(results) < wanted and not errors:
                results.append(value)
                if len(results) == wanted:
                    over.set()

    workers = [asyncio.create_task(worker()) for _ in range(limit)]
    try:
        await over.wait()
        if errors:
            raise errors[0]
        return results
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
