# mistake: awaits each job before starting the next, so nothing overlaps
# violates: keep `limit` jobs running
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    results = []
    i = 0
    while len(results) < wanted:
        results.append(await start_work(i))
        i += 1
    return results
