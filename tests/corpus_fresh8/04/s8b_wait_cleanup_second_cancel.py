# mistake: waits for the cancelled jobs with a single asyncio.wait, which a second cancel interrupts
# violates: cancellation -- "it ends cancelled once the jobs in flight are cleaned up, even if a second cancel arrives while it waits for them"
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
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
