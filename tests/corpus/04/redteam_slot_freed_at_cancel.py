# mistake: at a job's deadline it cancels the job and drops it from the pending set at once (refilling its slot), awaiting the cancelled ones only at the very end
# violates: a timed-out job keeps its slot until it is gone
# the red team's words: "deadline per job: 'it counts as in flight until its cleanup is over, and its slot goes to the next job then' (so: never more than limit in flight)"; from: red team of session 14, who saw the statement only
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    loop = asyncio.get_running_loop()
    results: list = []
    pending: set[asyncio.Task] = set()
    timed_out: set[asyncio.Task] = set()
    started: dict[asyncio.Task, float] = {}
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                task = asyncio.create_task(start_work(next_job))
                started[task] = loop.time()
                pending.add(task)
                next_job += 1
            timeout = None
            if job_timeout is not None:
                first_deadline = min(started[t] for t in pending) + job_timeout
                timeout = max(0.0, first_deadline - loop.time())
            done, pending = await asyncio.wait(
                pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
            if job_timeout is not None:
                now = loop.time()
                for task in list(pending):
                    if now >= started[task] + job_timeout:
                        task.cancel()  # cancelled: it no longer counts, its slot is free
                        pending.discard(task)
                        timed_out.add(task)
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, *timed_out, return_exceptions=True)
