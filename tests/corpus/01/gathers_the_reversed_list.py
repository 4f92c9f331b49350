# mistake: hands the reversed list to gather, which runs all the bodies at once
# violates: start only when it is awaited
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    coros = [record_job(job_id, log) for job_id in job_ids]
    coros.reverse()
    return list(await asyncio.gather(*coros))
