# mistake: the page's one-liner, a list comprehension that awaits the objects in reverse; a body's error leaves the earlier ids' objects unawaited and unclosed
# violates: nothing left to warn
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    created = [record_job(job_id, log) for job_id in job_ids]
    return [await coro for coro in reversed(created)]
