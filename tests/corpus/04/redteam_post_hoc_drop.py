# mistake: checks each job's age only when some job finishes: drops results of jobs that took longer than job_timeout and cancels overdue ones then
# violates: a job ran past its job_timeout
# the red team's words: "deadline per job: 'cancelled exactly job_timeout seconds after its own start if it is still running then, not earlier and not later'"; from: red team of session 14, who saw the statement only
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    loop = asyncio.get_running_loop()
    results: list = []
    pending: set[asyncio.Task] = set()
    started: dict[asyncio.Task, float] = {}
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                task = asyncio.create_task(start_work(next_job))
                started[task] = loop.time()
                pending.add(task)
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            now = loop.time()
            for task in done:
                if job_timeout is not None and now - started[task] > job_timeout:
                    continue  # took too long: no result
                if len(results) < wanted:
                    results.append(task.result())
            if job_timeout is not None:
                overdue = {t for t in pending if now - started[t] > job_timeout}
                for task in overdue:
                    task.cancel()
                await asyncio.gather(*overdue, return_exceptions=True)
                pending -= overdue
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
