# mistake: gathers with return_exceptions=True, so a failed call comes back as a value
# violates: the failure must propagate
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    tasks = [asyncio.create_task(one(p)) for p in prompts]
    return await asyncio.gather(*tasks, return_exceptions=True)
