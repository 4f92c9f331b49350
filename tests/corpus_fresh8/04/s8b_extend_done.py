# mistake: appends every finished job of a wake-up, so jobs finishing at the same moment overshoot `wanted`
# violates: results -- "exactly `wanted` of them"
# from: red team, session 8 (unseen tests)
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(start_work(next_job)))
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            results.extend(task.result() for task in done)
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
