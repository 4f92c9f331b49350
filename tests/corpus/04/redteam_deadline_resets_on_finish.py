# mistake: used wait(timeout=job_timeout) as the deadline: when nothing finished within job_timeout, cancel everything in flight
# violates: a job ran past its job_timeout
# the red team's words: "deadline per job: cancelled 'exactly job_timeout seconds after its own start ..., not earlier and not later, however many other jobs finish meanwhile'"; from: red team of session 14, who saw the statement only
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    results: list = []
    pending: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(start_work(next_job)))
                next_job += 1
            done, pending = await asyncio.wait(
                pending, timeout=job_timeout, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                # nothing finished within job_timeout: the jobs in flight are too slow
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                pending = set()
                continue
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
