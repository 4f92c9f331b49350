# mistake: TaskGroup + semaphore, but the failing call's permit is handed to the next waiting prompt before the group cancels it, so one more call starts after the error
# violates: errors -- "when a call raises, ... no new call starts after it"
# from: red team, session 8 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    semaphore = asyncio.Semaphore(limit)

    async def one(prompt):
        async with semaphore:
            return await generate(prompt)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(p)) for p in prompts]
    return [t.result() for t in tasks]
