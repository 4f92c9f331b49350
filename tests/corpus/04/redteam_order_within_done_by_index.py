# mistake: refills each freed slot at once, but hands the results over sorted by job number once enough jobs have finished, so a job that finished 35 ms after another can come first (red team, issue 28)
# violates: keep finishing order
# breaks: results in finishing order
# how: collects (job number, result) pairs as jobs finish and returns the first `wanted` sorted by job number; the red team's version polled with a 0.05 s timeout instead, which on a loaded machine also refilled a freed slot late and was rejected for that property instead
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    finished = []
    pending = {}
    i = 0
    try:
        while len(finished) < wanted:
            while len(pending) < limit:
                pending[asyncio.create_task(start_work(i))] = i
                i += 1
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for t in done:
                finished.append((pending.pop(t), t.result()))
        return [result for _, result in sorted(finished)[:wanted]]
    finally:
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)
