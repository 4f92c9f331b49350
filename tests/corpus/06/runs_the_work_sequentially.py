# mistake: awaits each call in turn, so the limit is never used
# violates: the work must run concurrently
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)
    results = []
    for p in prompts:
        async with sem:
            results.append(await generate(p))
    return results
