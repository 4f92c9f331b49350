# mistake: starts  jobs at once and ignores the limit
# violates: in flight at once with limit
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    tasks = [asyncio.create_task(start_work(i)) for i in range(wanted)]
    results = []
    try:
        for next_done in asyncio.as_completed(tasks):
            results.append(await next_done)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return results
