# correct: keeps each job's start with time.monotonic() (not the loop's clock) in a dict task -> started, waits at most until the oldest running job is due, and cancels the due ones; a timed-out job stays in the pending set, with no result, until it is gone
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results: list = []
    pending: set[asyncio.Task] = set()
    started: dict[asyncio.Task, float] = {}
    given_up: set[asyncio.Task] = set()
    n = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                task = asyncio.create_task(start_work(n))
                started[task] = time.monotonic()
                pending.add(task)
                n += 1
            live = [started[t] for t in pending if t not in given_up]
            timeout = None
            if job_timeout is not None and live:
                timeout = max(0.0, min(live) + job_timeout - time.monotonic())
            done, pending = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task not in given_up and len(results) < wanted:
                    results.append(task.result())
            if job_timeout is not None:
                for task in pending - given_up:
                    if time.monotonic() - started[task] >= job_timeout:
                        task.cancel()
                        given_up.add(task)
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
