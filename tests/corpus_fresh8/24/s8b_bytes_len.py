# mistake: measures text size in UTF-8 bytes, so short non-ASCII texts go to the pool
# violates: where -- "texts shorter than `inline_below` characters (characters, not bytes) scored directly in the coroutine"
# from: red team, session 8 (unseen tests)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results = [None] * len(texts)
    pending = []
    for i, text in enumerate(texts):
        if len(text.encode()) < inline_below:  # size of what would be sent
            results[i] = score(text)
        else:
            pending.append((i, loop.run_in_executor(pool, score, text)))
    if pending:
        done = await asyncio.gather(*(f for _, f in pending))
        for (i, _), r in zip(pending, done):
            results[i] = r
    return results
