# mistake: returns as soon as it has enough results and leaves the jobs in flight running
# violates: left running when first_results returned
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results: list = []
    pending: set = set()
    next_job = 0
    while len(results) < wanted:
        while len(pending) < limit:
            pending.add(asyncio.create_task(start_work(next_job)))
            next_job += 1
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if len(results) < wanted:
                results.append(task.result())
    return results
