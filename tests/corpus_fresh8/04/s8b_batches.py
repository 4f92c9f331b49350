# mistake: runs jobs in batches of `limit`, taking each batch's results in finishing order before starting the next batch
# violates: the exercise, step 2 -- "start the next job as soon as any job finishes (do not wait for a whole batch)"
# from: red team, session 8 (unseen tests)
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    next_job = 0
    while True:
        batch = [asyncio.create_task(start_work(next_job + k)) for k in range(limit)]
        next_job += limit
        try:
            for next_done in asyncio.as_completed(batch):
                results.append(await next_done)
                if len(results) == wanted:
                    return results
        finally:
            for task in batch:
                task.cancel()
            await asyncio.gather(*batch, return_exceptions=True)
