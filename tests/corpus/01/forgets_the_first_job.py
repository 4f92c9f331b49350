# mistake: walks the list backwards with range(len - 1, 0, -1) and never awaits the first object
# violates: every coroutine object must be awaited
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    coros = [record_job(job_id, log) for job_id in job_ids]
    results = []
    for i in range(len(coros) - 1, 0, -1):
        results.append(await coros[i])
    return results
