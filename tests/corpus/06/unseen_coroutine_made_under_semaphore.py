# mistake: holds the semaphore only while *creating* the generate() coroutine, awaits it after release
# violates: calls ran at once with limit
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "at most limit calls of generate may be running at once"
# breaks: the semaphore is released before the call runs, so every call runs at once
# how: 6 prompts, limit 2: peak in-flight generate calls is 6
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            call = generate(prompt)
        return await call

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(p)) for p in prompts]
    return [t.result() for t in tasks]
