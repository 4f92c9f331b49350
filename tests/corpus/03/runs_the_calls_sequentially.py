# mistake: awaits each call before starting the next, so nothing overlaps
# violates: in flight at once
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    results = []
    for name in names:
        results.append(await score_one(name))
    return results
