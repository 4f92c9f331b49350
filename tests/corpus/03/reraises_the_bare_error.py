# mistake: cleans up correctly but lets the bare ValueError out instead of an ExceptionGroup
# violates: must come out as an ExceptionGroup
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    try:
        return list(await asyncio.gather(*tasks))
    except Exception:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
