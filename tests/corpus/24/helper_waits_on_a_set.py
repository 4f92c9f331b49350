# mistake: awaits the pool's futures with asyncio.wait, which refuses an empty set when every text is short
# violates: score_all raised
# from: written by the helper who wrote the generators (issue 37)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results: list = [None] * len(texts)
    futures = {}
    for index, text in enumerate(texts):
        if len(text) < inline_below:
            results[index] = score(text)
        else:
            futures[loop.run_in_executor(pool, score, text)] = index
    await asyncio.wait(futures)
    for future, index in futures.items():
        results[index] = future.result()
    return results
