# mistake: wraps each job in `async with asyncio.timeout(job_timeout)` and treats every TimeoutError as "deadline hit, no result" (never checks expired()), so a job's own TimeoutError is swallowed; its timeout also stays armed after the final cancel, so it cuts a cancelled job's cleanup short and first_results ends early (from session 27 to 28 that was its only graded failure: no generated job raised a TimeoutError of its own until session 29; the smallest failing scenario may show either)
# violates: ended before the jobs it cancelled had finished their cleanup || a job's own TimeoutError was swallowed as if its deadline had passed
# the red team's words: "errors: 'when a job raises before wanted results are in, first_results raises that error itself' (a job's own TimeoutError is swallowed)"; from: red team of session 14, who saw the statement only
_TIMED_OUT = object()


async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""

    async def run(i):
        try:
            async with asyncio.timeout(job_timeout):
                return await start_work(i)
        except TimeoutError:
            return _TIMED_OUT

    results: list = []
    pending: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(run(next_job)))
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                result = task.result()
                if result is not _TIMED_OUT and len(results) < wanted:
                    results.append(result)
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
