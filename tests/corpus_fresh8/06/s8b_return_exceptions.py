# mistake: gather(return_exceptions=True) so one failure does not lose the other results; the error is returned in the list
# violates: the exercise, step 4 -- "if one call raises, the error must come out of `generate_all`"
# from: red team, session 8 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    semaphore = asyncio.Semaphore(limit)

    async def one(prompt):
        async with semaphore:
            return await generate(prompt)

    return await asyncio.gather(*(one(p) for p in prompts), return_exceptions=True)
