# mistake: wraps each job in asyncio.wait_for(start_work(i), job_timeout) (chapter 05) and reads task.result() as before, so a job that times out raises TimeoutError out of first_results instead of giving no result
# violates: a job past its job_timeout gives no result and does not end first_results
# breaks: a timed-out job gives no result; the others run on
# how: job 0 hangs with job_timeout 0.12 s: its TimeoutError ends the call
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results: list = []
    pending: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                job = asyncio.wait_for(start_work(next_job), job_timeout)
                pending.add(asyncio.create_task(job))
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
