# mistake: polls with asyncio.wait(pending, timeout=0.1) instead of FIRST_COMPLETED, so a freed slot stays empty up to 0.1 s (red team, issue 28)
# violates: start the next job as soon as one finishes
# breaks: start the next job as soon as any job finishes
# how: polls with asyncio.wait(pending, timeout=0.1) instead of FIRST_COMPLETED, so a freed slot stays empty up to 0.1 s
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    pending = set()
    i = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(start_work(i)))
                i += 1
            done, pending = await asyncio.wait(pending, timeout=0.1)
            for t in done:
                if len(results) < wanted:
                    results.append(t.result())
        return results
    finally:
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)
