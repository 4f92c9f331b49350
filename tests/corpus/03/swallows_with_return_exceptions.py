# mistake: gathers with return_exceptions=True, so the failure comes back as a list item
# violates: the failure must propagate
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    return list(await asyncio.gather(*tasks, return_exceptions=True))
