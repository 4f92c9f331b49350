# mistake: on cancellation closes the objects not yet awaited but then returns the results so far instead of re-raising
# violates: a cancelled call ends cancelled (CancelledError reaches the caller)
# from: red team, session 5 (unseen tests)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    jobs = [record_job(job_id, log) for job_id in job_ids]
    results = []
    remaining = list(reversed(jobs))
    try:
        while remaining:
            results.append(await remaining[0])
            remaining.pop(0)
    except asyncio.CancelledError:
        for job in remaining:
            job.close()  # no "never awaited" warnings for the jobs we skip
        return results
    except BaseException:
        for job in remaining[1:]:
            job.close()
        raise
    return results
