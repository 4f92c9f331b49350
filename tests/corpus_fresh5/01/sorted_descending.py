# mistake: reads "reverse order" as descending ids and sorts them, instead of reversing the given order
# violates: bodies run last id (in the given order) first, for ids given in any order
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    jobs = {}
    for position, job_id in enumerate(job_ids):
        jobs[position] = (job_id, record_job(job_id, log))
    results = []
    for _, job in sorted(jobs.values(), key=lambda pair: pair[0], reverse=True):
        results.append(await job)
    return results
