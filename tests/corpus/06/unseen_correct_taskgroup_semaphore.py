# correct: one shared Semaphore, every task created up front inside a TaskGroup
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(p)) for p in prompts]
    return [t.result() for t in tasks]
