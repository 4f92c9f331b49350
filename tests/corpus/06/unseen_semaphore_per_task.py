# mistake: creates the semaphore inside each task (the exact slip the chapter's hint warns about)
# violates: calls ran at once with limit
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "at most limit calls of generate may be running at once"
# breaks: every call runs at once; the limit bounds nothing
# how: 6 prompts, limit 2: peak in-flight generate calls is 6
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    async def one(prompt):
        sem = asyncio.Semaphore(limit)
        async with sem:
            return await generate(prompt)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(p)) for p in prompts]
    return [t.result() for t in tasks]
