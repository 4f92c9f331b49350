# correct: waits for the cancelled jobs with a single asyncio.wait in its finally; a second cancel interrupts that wait, which Exercise 4.1 asked to survive until session 27 and no longer does (chapter 05 shows the case); written before the job_timeout twist, so it lacks that parameter
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
