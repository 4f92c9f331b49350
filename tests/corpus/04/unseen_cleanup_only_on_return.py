# mistake: cleans up (cancel + wait) only on the normal return path, not in a finally
# violates: left running after a job raised
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "do the same when a job raises ... and when the caller cancels first_results"
# breaks: when a job raises or the caller cancels, the other jobs keep running
# how: job 1 raises at once while jobs 0 and 2 sleep: after the error reaches the caller, jobs 0 and 2 are still running
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = set()
    i = 0
    while len(results) < wanted:
        while len(pending) < limit:
            pending.add(asyncio.ensure_future(start_work(i)))
            i += 1
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            results.append(t.result())
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return results[:wanted]
