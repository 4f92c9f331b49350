# correct: asyncio.TaskGroup, tasks kept in a list in input order
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(score_one(name)) for name in names]
    return [t.result() for t in tasks]
