# mistake: the cancel-and-wait step runs only after the loop returns normally, not in a finally (red team, issue 28)
# violates: left running after a job raised
# breaks: the jobs still in flight are cancelled and awaited on every way out (here: the caller is cancelled, or a job raises)
# how: the cancel-and-wait step runs only after the loop returns normally, not in a finally
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = set()
    i = 0
    while len(results) < wanted:
        while len(pending) < limit:
            pending.add(asyncio.create_task(start_work(i)))
            i += 1
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            if len(results) < wanted:
                results.append(t.result())
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=2)
    return results
