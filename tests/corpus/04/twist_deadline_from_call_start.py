# mistake: one deadline for the whole call: computes loop.time() + job_timeout once, when first_results starts, and cancels whatever is in flight then, so a job started later is cancelled before its own job_timeout has passed
# violates: a job was cancelled before its job_timeout
# breaks: each job's deadline counts from its own start
# how: a job started at 1 s with job_timeout 1.03 s is cancelled at 1.03 s
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    loop = asyncio.get_running_loop()
    deadline = None if job_timeout is None else loop.time() + job_timeout
    results: list = []
    pending: set[asyncio.Task] = set()
    timed_out: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(start_work(next_job)))
                next_job += 1
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            done, pending = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task in timed_out:
                    continue
                if len(results) < wanted:
                    results.append(task.result())
            if deadline is not None and deadline <= loop.time():
                for task in pending - timed_out:
                    task.cancel()
                    timed_out.add(task)
                deadline = loop.time() + job_timeout
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
