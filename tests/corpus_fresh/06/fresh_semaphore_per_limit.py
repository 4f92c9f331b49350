# mistake: reads the hint "one object shared by all the calls" as one semaphore per limit for the whole program, cached by `limit`, so two callers with the same limit share one semaphore
# violates: several callers at once
# from: red team, session 4 (unseen tests)
_SEMAPHORES: dict = {}


async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = _SEMAPHORES.setdefault(limit, asyncio.Semaphore(limit))

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(p)) for p in prompts]
    return [t.result() for t in tasks]
