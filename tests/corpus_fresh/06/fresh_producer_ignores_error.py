# mistake: a producer loop takes a permit before creating each task and only looks for errors at the final gather, so after a call raises it keeps starting the remaining prompts
# violates: no new call starts after it
# from: red team, session 4 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)
    tasks = []
    try:
        for prompt in prompts:
            await sem.acquire()
            task = asyncio.create_task(generate(prompt))
            task.add_done_callback(lambda _t: sem.release())
            tasks.append(task)
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
