# mistake: on error or cancel, cancels the tasks but does not wait for them to clean up before re-raising
# violates: when it ends -- "the error or cancel plus the cleanup of the cancelled calls: not earlier (no call left running)"
# from: red team, session 8 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    semaphore = asyncio.Semaphore(limit)

    async def one(prompt):
        async with semaphore:
            return await generate(prompt)

    tasks = [asyncio.create_task(one(p)) for p in prompts]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        raise
