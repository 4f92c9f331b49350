# mistake: after an error or a cancel it cancels the calls but waits at most 1 s for their cleanup ("never hang"), so a call with a slow cleanup is still running when generate_all ends
# violates: when it ends
# from: red team, session 4 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    tasks = [asyncio.create_task(one(p)) for p in prompts]
    if not tasks:
        return []
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.wait(tasks, timeout=1.0)  # bounded: a stuck cleanup must not hang us
        raise
