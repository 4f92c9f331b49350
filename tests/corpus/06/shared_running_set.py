# mistake: keeps every call's task in one module-level set (the chapter 03 idiom for strong references) and, when a call raises, cancels everything in that set, so one caller's error cancels another caller's calls
# violates: ended with 'cancelled' where the contract says 'returned'
# from: red team, session 4 (unseen tests)
_running: set = set()


async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    tasks = []
    for prompt in prompts:
        task = asyncio.create_task(one(prompt))
        _running.add(task)
        task.add_done_callback(_running.discard)
        tasks.append(task)
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        victims = [t for t in _running if not t.done()]
        for task in victims:
            task.cancel()
        await asyncio.gather(*victims, return_exceptions=True)
        raise
