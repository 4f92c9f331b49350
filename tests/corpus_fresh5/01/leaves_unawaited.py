# mistake: when a body raises (or the call is cancelled) the objects not yet awaited are dropped unclosed
# violates: nothing left behind: objects that will never run are closed, no 'was never awaited' warning
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    jobs = [record_job(job_id, log) for job_id in job_ids]
    results = []
    for job in reversed(jobs):
        results.append(await job)
    return results
