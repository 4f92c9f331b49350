# mistake: runs the prompts in fixed batches of `limit` with gather, waiting for each whole batch
# violates: calls -- "the next one the moment a running call finishes, not later" ("no waiting for a fixed batch of `limit` to complete")
# from: red team, session 8 (unseen tests)
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    results = []
    for i in range(0, len(prompts), limit):
        async with asyncio.TaskGroup() as tg:
            batch = [tg.create_task(generate(p)) for p in prompts[i:i + limit]]
        results.extend(t.result() for t in batch)
    return results
