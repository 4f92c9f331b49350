# mistake: after an error, awaits the objects still waiting (ignoring their errors) so none warns, which runs later bodies
# violates: each body starts only when awaited
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    created = [record_job(job_id, log) for job_id in job_ids]
    order = list(reversed(created))
    results = []
    for i, coro in enumerate(order):
        try:
            results.append(await coro)
        except Exception:
            for rest in order[i + 1:]:
                try:
                    await rest
                except Exception:
                    pass
            raise
    return results
