# mistake: creates a new Semaphore inside each task, so every call gets its own permit
# violates: one semaphore must be shared by all the calls
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""

    async def generate_one(prompt: str):
        sem = asyncio.Semaphore(limit)
        async with sem:
            return await generate(prompt)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(generate_one(p)) for p in prompts]
    return [t.result() for t in tasks]
