# mistake: uses plain gather, which lets the other calls run on after one fails
# violates: still running when score_group raised
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    return list(await asyncio.gather(*(score_one(name) for name in names)))
