# mistake: starts no more jobs than results are still wanted ("do not waste work"), so near the end fewer than `limit` jobs run while more results are wanted and the last results come later
# violates: and `limit` of them as long as more results are wanted
# from: red team, session 4 (unseen tests)
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results: list = []
    running: set = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(running) < min(limit, wanted - len(results)):
                running.add(asyncio.create_task(start_work(next_job)))
                next_job += 1
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
