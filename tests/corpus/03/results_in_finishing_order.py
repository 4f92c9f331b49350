# mistake: collects results with as_completed, so they come back in finishing order
# violates: must follow the order of the names
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    results = []
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(score_one(name)) for name in names]
        for next_done in asyncio.as_completed(tasks):
            results.append(await next_done)
    return results
