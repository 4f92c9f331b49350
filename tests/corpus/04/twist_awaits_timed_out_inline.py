# mistake: keeps a deadline per job, but when one is due it cancels it and awaits it right there, before looking at the other jobs again, so while it cleans up no finished job is noticed and no freed slot is refilled
# violates: could start at || ran past its job_timeout
# breaks: start the next job the moment a slot frees, while a timed-out job cleans up
# how: a job times out and needs 1 s to clean up while another job finishes meanwhile; its slot stays empty until the cleanup is over
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    loop = asyncio.get_running_loop()
    results: list = []
    pending: set[asyncio.Task] = set()
    started_at: dict[asyncio.Task, float] = {}
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                task = asyncio.create_task(start_work(next_job))
                started_at[task] = loop.time()
                pending.add(task)
                next_job += 1
            timeout = None
            if job_timeout is not None:
                timeout = max(0.0, min(started_at[t] for t in pending) + job_timeout - loop.time())
            done, pending = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
            for task in list(pending):
                if job_timeout is not None and started_at[task] + job_timeout <= loop.time():
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)  # gone before we go on
                    pending.discard(task)
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
