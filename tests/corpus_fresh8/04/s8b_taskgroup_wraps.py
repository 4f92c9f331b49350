# mistake: runs the jobs in a TaskGroup (chapter 03), so a job's error comes out wrapped in an ExceptionGroup
# violates: errors -- "`first_results` raises that error" (unlike chapter 06, this statement does not accept an ExceptionGroup)
# from: red team, session 8 (unseen tests)
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    async with asyncio.TaskGroup() as tg:
        pending = set()
        next_job = 0
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(tg.create_task(start_work(next_job)))
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
        for task in pending:
            task.cancel()
    return results
