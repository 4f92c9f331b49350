# mistake: never cancels the outstanding calls when one fails (plain gather)
# violates: still running after the failure
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def limited(prompt):
        async with sem:
            return await generate(prompt)

    return await asyncio.gather(*[limited(p) for p in prompts])
