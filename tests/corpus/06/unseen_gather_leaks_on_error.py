# mistake: shared semaphore, but asyncio.gather to collect (no TaskGroup)
# violates: generate calls were still running after the failure: cancel the others, then wait for
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if one call raises ... no other call may be left running"
# breaks: after the error comes out, the other calls (and the queued ones) keep running
# how: prompt "boom" raises at once while other prompts sleep: after generate_all raised, calls are still in flight and later ones even start
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    sem = asyncio.Semaphore(limit)

    async def one(prompt):
        async with sem:
            return await generate(prompt)

    tasks = [asyncio.create_task(one(p)) for p in prompts]
    return list(await asyncio.gather(*tasks))
