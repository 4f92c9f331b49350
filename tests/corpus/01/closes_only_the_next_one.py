# mistake: on an error, closes the next object in line only, not every one still waiting
# violates: nothing left to warn
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    created = [record_job(job_id, log) for job_id in job_ids]
    order = list(reversed(created))
    results = []
    for i, coro in enumerate(order):
        try:
            results.append(await coro)
        except BaseException:
            if i + 1 < len(order):
                order[i + 1].close()
            raise
    return results
