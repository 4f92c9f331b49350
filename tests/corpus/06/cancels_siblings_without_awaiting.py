# mistake: cancels the sibling tasks on failure but never awaits them
# violates: still running after the failure
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    tasks = [asyncio.create_task(one(p)) for p in prompts]
    try:
        return await asyncio.gather(*tasks)
    except Exception:
        for t in tasks:
            t.cancel()
        raise
