# mistake: awaits in reverse but puts each result back in its id's position
# violates: in the order they were awaited
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    coros = [record_job(job_id, log) for job_id in job_ids]
    results = [None] * len(coros)
    for i in reversed(range(len(coros))):
        results[i] = await coros[i]
    return results
