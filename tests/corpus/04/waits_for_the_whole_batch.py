# mistake: starts  jobs, waits for the whole batch, then starts the next batch
# violates: refilled at once
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results: list = []
    next_job = 0
    while len(results) < wanted:
        batch = [asyncio.create_task(start_work(next_job + k)) for k in range(limit)]
        next_job += limit
        for coro in asyncio.as_completed(batch):
            result = await coro
            if len(results) < wanted:
                results.append(result)
    return results
