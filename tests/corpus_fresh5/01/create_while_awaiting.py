# mistake: creates each coroutine object only when it is about to await it, walking the ids backwards
# violates: every object is created up front, in the given order, before any body runs
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    results = []
    for job_id in reversed(job_ids):
        job = record_job(job_id, log)
        results.append(await job)
    return results
