# mistake: cancels and awaits the leftover jobs after the loop instead of in a finally, so a job that raises (or a cancelled caller) leaves the other jobs running
# violates: left running after a job raised
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results: list = []
    pending: set[asyncio.Task] = set()
    next_job = 0
    while len(results) < wanted:
        while len(pending) < limit:
            pending.add(asyncio.create_task(start_work(next_job)))
            next_job += 1
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if len(results) < wanted:
                results.append(task.result())
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return results
