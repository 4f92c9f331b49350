# mistake: starts one new job per wake-up, so when two jobs finish at the same moment only one slot is refilled
# violates: in flight -- "`limit` of them as long as more results are wanted; jobs start ... each the moment a slot frees, not later"
# from: red team, session 8 (unseen tests)
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    pending = {asyncio.create_task(start_work(i)) for i in range(limit)}
    next_job = limit
    results = []
    try:
        while len(results) < wanted:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
            pending.add(asyncio.create_task(start_work(next_job)))  # refill the freed slot
            next_job += 1
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
