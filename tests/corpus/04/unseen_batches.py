# mistake: starts `limit` jobs, waits for the whole batch with gather, then starts the next batch
# violates: a freed slot must be refilled at once, not after the whole batch has finished: wait for
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "start the next job as soon as any job finishes (do not wait for a whole batch)"; "a freed slot refilled at once"
# breaks: a slow job holds up the whole batch; fast jobs are not started meanwhile and results come in batch order
# how: job 0 takes 0.5 s, others 0.01 s, wanted=4 limit=3: returns job 1, job 2, job 0 ... (the slow job 0 is among the results) and takes 0.5 s
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    i = 0
    while len(results) < wanted:
        batch = [start_work(j) for j in range(i, i + limit)]
        i += limit
        results.extend(await asyncio.gather(*batch))
    return results[:wanted]
