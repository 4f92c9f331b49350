# mistake: follows the hint "one object shared by all the calls" too far: one module-level semaphore, made on first use
# violates: several callers at once -- "each call behaves as if alone (its semaphore is its own)"
# from: red team, session 8 (unseen tests)
_semaphore = None


async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    global _semaphore
    if _semaphore is None:
        _semaphore = asyncio.Semaphore(limit)

    async def one(prompt):
        async with _semaphore:
            return await generate(prompt)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(p)) for p in prompts]
    return [t.result() for t in tasks]
