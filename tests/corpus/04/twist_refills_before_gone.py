# mistake: keeps a deadline per job and wakes at the earliest, but takes a timed-out job out of the pending set the moment it cancels it and refills its slot at once, awaiting the cancelled jobs only at the end, so while one cleans up, limit + 1 jobs are in flight
# violates: a timed-out job keeps its slot until it is gone
# breaks: never more than limit in flight (a cancelled job is in flight until its cleanup is over)
# how: job 0 needs 40 ms to clean up after its deadline; its slot is refilled before that
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    loop = asyncio.get_running_loop()
    results: list = []
    pending: set[asyncio.Task] = set()
    cancelled: list[asyncio.Task] = []
    due: dict[asyncio.Task, float] = {}
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                task = asyncio.create_task(start_work(next_job))
                pending.add(task)
                next_job += 1
                if job_timeout is not None:
                    due[task] = loop.time() + job_timeout
            first_due = min((due[t] for t in pending if t in due), default=None)
            timeout = None if first_due is None else max(0.0, first_due - loop.time())
            done, pending = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
            for task in list(pending):
                if task in due and due[task] <= loop.time():
                    task.cancel()
                    pending.discard(task)  # its slot is free now
                    cancelled.append(task)
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, *cancelled, return_exceptions=True)
