# correct: pops the objects from the end of the list and, in a finally, closes whatever is still in it
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    pending = [record_job(job_id, log) for job_id in job_ids]
    results = []
    try:
        while pending:
            results.append(await pending.pop())
    finally:
        for coro in pending:
            coro.close()
    return results
