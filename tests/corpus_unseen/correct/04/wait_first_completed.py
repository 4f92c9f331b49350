# correct: asyncio.wait(FIRST_COMPLETED) refill loop, cleanup (cancel + wait) in finally
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = set()
    next_i = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.ensure_future(start_work(next_i)))
                next_i += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for t in done:
                results.append(t.result())  # raises the job's error
        return results[:wanted]
    finally:
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending)
