# mistake: creates and awaits each coroutine in the same step, so nothing is created up front
# violates: must be created first
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    results = []
    for job_id in reversed(job_ids):
        coro = record_job(job_id, log)
        results.append(await coro)
    return results
