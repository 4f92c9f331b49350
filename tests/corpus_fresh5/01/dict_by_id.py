# mistake: keeps the coroutine objects in a dict keyed by id, so a repeated id gets one object and runs once
# violates: one coroutine object and one run per occurrence of an id, repeats included
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    pending = {}
    for job_id in job_ids:
        if job_id not in pending:
            pending[job_id] = record_job(job_id, log)
    results = []
    for job_id in reversed(list(pending)):
        results.append(await pending[job_id])
    return results
