# mistake: cancels the jobs still in flight before returning but does not wait for them
# violates: jobs were cancelled but still running when first_results returned: after cancel
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "cancel the jobs still in flight and wait until they are gone"
# breaks: right after the return the cancelled jobs are still pending; their cleanup has not run
# how: after first_results returns, a job's `finally` has not run yet and its task is not done
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = set()
    i = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.ensure_future(start_work(i)))
                i += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for t in done:
                results.append(t.result())
        return results[:wanted]
    finally:
        for t in pending:
            t.cancel()
