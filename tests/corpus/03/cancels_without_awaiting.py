# mistake: cancels the other tasks on failure but raises before they have finished
# violates: still running when score_group raised
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    try:
        return list(await asyncio.gather(*tasks))
    except Exception as exc:
        for task in tasks:
            task.cancel()
        raise ExceptionGroup("scoring failed", [exc]) from None
