# mistake: catches a body's exception, keeps it as that job's result and goes on with the next body
# violates: a body's error comes out of run_in_reverse and no later body runs
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    jobs = [record_job(job_id, log) for job_id in job_ids]
    results = []
    for job in reversed(jobs):
        try:
            results.append(await job)
        except Exception as exc:  # one failed job should not lose the others
            results.append(exc)
    return results
