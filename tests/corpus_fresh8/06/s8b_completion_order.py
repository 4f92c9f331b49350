# mistake: collects results with as_completed, i.e. in the order the calls finish
# violates: results -- "the list of results in the order of `prompts`"
# from: red team, session 8 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    semaphore = asyncio.Semaphore(limit)

    async def one(prompt):
        async with semaphore:
            return await generate(prompt)

    tasks = [asyncio.create_task(one(p)) for p in prompts]
    try:
        return [await f for f in asyncio.as_completed(tasks)]
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
