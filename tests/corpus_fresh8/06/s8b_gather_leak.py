# mistake: plain asyncio.gather; when one call raises, the others keep running after the error comes out
# violates: the exercise, step 4 -- "the error must come out of `generate_all` and no other call may be left running"
# from: red team, session 8 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    semaphore = asyncio.Semaphore(limit)

    async def one(prompt):
        async with semaphore:
            return await generate(prompt)

    tasks = [asyncio.create_task(one(p)) for p in prompts]
    return await asyncio.gather(*tasks)
