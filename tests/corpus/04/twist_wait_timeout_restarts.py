# mistake: copies the page's wait(timeout=...): waits with timeout=job_timeout and FIRST_COMPLETED, and cancels what is pending only when a whole job_timeout passes with nothing finished, so while other jobs keep finishing a stuck job is never cancelled
# violates: a job ran past its job_timeout
# breaks: a deadline per job (the timer restarts whenever any job finishes)
# how: job 0 hangs while the others finish every 0.05 s with job_timeout 0.12 s: no wait ever times out
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results: list = []
    pending: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(start_work(next_job)))
                next_job += 1
            done, pending = await asyncio.wait(pending, timeout=job_timeout,
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:  # nothing finished within job_timeout: the pending ones are too slow
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                pending = set()
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
