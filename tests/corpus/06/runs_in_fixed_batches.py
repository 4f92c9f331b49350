# mistake: runs the prompts in fixed batches of `limit` and waits for each whole batch
# violates: not wait for a fixed batch
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    results = []
    for start in range(0, len(prompts), limit):
        batch = prompts[start:start + limit]
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(generate(p)) for p in batch]
        results.extend(t.result() for t in tasks)
    return results
