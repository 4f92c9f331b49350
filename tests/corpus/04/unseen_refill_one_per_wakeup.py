# mistake: after each wake-up starts exactly one new job, even when several finished together
# violates: the results must be those of the first `wanted` jobs to finish, in finishing order
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "limit kept busy; a freed slot refilled at once"
# breaks: when two jobs finish at the same moment only one replacement starts, so fewer than `limit` run from then on
# how: limit=4, jobs 0-1 finish together at 10 ms: afterwards only 3 jobs are in flight, never 4 again
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = {asyncio.ensure_future(start_work(i)) for i in range(limit)}
    i = limit
    try:
        while True:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for t in done:
                results.append(t.result())
            if len(results) >= wanted:
                return results[:wanted]
            pending.add(asyncio.ensure_future(start_work(i)))
            i += 1
    finally:
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending)
