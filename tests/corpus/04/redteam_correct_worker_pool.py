# mistake: a pool of `limit` worker tasks, each running job after job inline (asyncio.timeout per job, told apart from a job's own TimeoutError by expired()); a worker records the result the moment its job returns and stops taking jobs once enough are in; but a cancel from the caller during its cleanup, after the results are in, is absorbed and the results returned
# violates: where the contract says 'cancelled'
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
