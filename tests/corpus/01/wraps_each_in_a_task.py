# mistake: wraps each coroutine in a Task, so the bodies start on their own at the next loop pass
# violates: start only when it is awaited
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    tasks = [asyncio.create_task(record_job(job_id, log)) for job_id in job_ids]
    results = []
    for task in reversed(tasks):
        results.append(await task)
    return results
