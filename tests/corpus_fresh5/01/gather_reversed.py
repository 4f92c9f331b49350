# mistake: hands the reversed objects to asyncio.gather, which runs all the bodies at once
# violates: each body starts only after the previous one has ended (one at a time)
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    jobs = [record_job(job_id, log) for job_id in job_ids]
    return list(await asyncio.gather(*reversed(jobs)))
