# mistake: written as a correct answer (asyncio.wait(FIRST_COMPLETED) refill loop, cleanup (cancel + wait) in finally) against a statement then silent on this path; the Graded list now settles it the other way
# violates: 1 job(s) left running when first_results ended (cancelled)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
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
