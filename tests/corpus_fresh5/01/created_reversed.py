# mistake: builds the list of coroutine objects from the reversed ids, so the objects are created last id first
# violates: all objects are created in the given order (first id first) before any body runs
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    jobs = [record_job(job_id, log) for job_id in reversed(job_ids)]
    results = []
    for job in jobs:
        results.append(await job)
    return results
