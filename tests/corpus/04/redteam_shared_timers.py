# mistake: keeps the deadline timers in a module-level dict (keyed by job number) and clears all of them when a call ends
# violates: a job ran past its job_timeout
# the red team's words: "several callers at once: 'each call behaves as if alone' (one call ending removes the other calls' deadlines)"; from: red team of session 14, who saw the statement only
_deadline_timers: dict[int, asyncio.TimerHandle] = {}


def _expire(task, timed_out):
    if not task.done():
        timed_out.add(task)
        task.cancel()


async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    loop = asyncio.get_running_loop()
    results: list = []
    pending: set[asyncio.Task] = set()
    timed_out: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                task = asyncio.create_task(start_work(next_job))
                if job_timeout is not None:
                    _deadline_timers[next_job] = loop.call_later(job_timeout, _expire, task, timed_out)
                pending.add(task)
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task in timed_out:
                    continue
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for handle in _deadline_timers.values():
            handle.cancel()
        _deadline_timers.clear()
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
