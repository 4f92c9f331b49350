# mistake: waits with a coarse timeout (0.05 s) and sorts each batch of done tasks by job number, mixing jobs that finished 50 ms apart (red team, issue 28)
# violates: keep finishing order
# breaks: results in finishing order
# how: waits with a coarse timeout (0.05 s) and sorts each batch of done tasks by job number, mixing jobs that finished 50 ms apart
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = {}
    i = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending[asyncio.create_task(start_work(i))] = i
                i += 1
            done, _ = await asyncio.wait(pending, timeout=0.05)
            for t in sorted(done, key=pending.get):
                del pending[t]
                if len(results) < wanted:
                    results.append(t.result())
        return results
    finally:
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)
