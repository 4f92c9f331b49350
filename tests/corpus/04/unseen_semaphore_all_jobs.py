# mistake: bounds concurrency with a semaphore but creates tasks for only the first `wanted` job numbers
# violates: the results must be those of the first `wanted` jobs to finish, in finishing order
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "return the results of the first wanted jobs to finish" and "limit kept busy"
# breaks: slow jobs among 0..wanted-1 are always waited for; faster later jobs are never started
# how: fetch_job with job 0 slow, wanted=4 limit=3: "job 0" is in the results and the call takes 0.5 s
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    sem = asyncio.Semaphore(limit)

    async def guarded(i):
        async with sem:
            return await start_work(i)

    tasks = [asyncio.ensure_future(guarded(i)) for i in range(wanted)]
    results = []
    try:
        for fut in asyncio.as_completed(tasks):
            results.append(await fut)
        return results
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
