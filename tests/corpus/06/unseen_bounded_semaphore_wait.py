# mistake: written as a correct answer (BoundedSemaphore with explicit acquire/release, asyncio.wait(FIRST_EXCEPTION), cancel + wait in finally) against a statement then silent on this path; the Graded list now settles it the other way
# violates: 1 generate call(s) left running when generate_all ended (can
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    gate = asyncio.BoundedSemaphore(limit)

    async def one(prompt):
        await gate.acquire()
        try:
            return await generate(prompt)
        finally:
            gate.release()

    tasks = [asyncio.ensure_future(one(p)) for p in prompts]
    if not tasks:
        return []
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in tasks:
            if t.done() and t.exception() is not None:
                raise t.exception()
        return [t.result() for t in tasks]
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.wait(tasks)
