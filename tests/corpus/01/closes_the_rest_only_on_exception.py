# mistake: closes the objects left over in `except Exception`, which a cancel (CancelledError, a BaseException) skips
# violates: nothing left to warn
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    created = [record_job(job_id, log) for job_id in job_ids]
    results = []
    remaining = list(reversed(created))
    try:
        while remaining:
            results.append(await remaining[0])
            remaining.pop(0)
    except Exception:
        for coro in remaining[1:]:
            coro.close()
        raise
    return results
