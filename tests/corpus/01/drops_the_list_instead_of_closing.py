# mistake: on an error or a cancel, clears its list of objects so "nothing holds them", expecting that to silence them; dropped objects still warn when collected
# violates: nothing left to warn
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    created = [record_job(job_id, log) for job_id in job_ids]
    results = []
    try:
        for coro in reversed(created):
            results.append(await coro)
    finally:
        created.clear()
    return results
