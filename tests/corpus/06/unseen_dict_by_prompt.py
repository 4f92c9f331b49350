# mistake: collects results in a dict keyed by prompt, then reads them back in prompt order
# violates: call generate once per prompt (a repeated prompt too)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "call generate(prompt) for every prompt"
# breaks: a prompt that appears twice gets the same result at both positions (the first call's result is dropped)
# how: prompts ["x", "x"] with a generate that numbers its calls: ["x#2", "x#2"] instead of ["x#1", "x#2"]
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    async with asyncio.TaskGroup() as tg:
        tasks = {p: tg.create_task(one(p)) for p in prompts}
    return [tasks[p].result() for p in prompts]
