# mistake: collects the results as they complete, short ones first, instead of in the order of texts
# violates: the results must be in the order of texts
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results = [score(text) for text in texts if len(text) < inline_below]
    futures = [loop.run_in_executor(pool, score, text) for text in texts if len(text) >= inline_below]
    for next_done in asyncio.as_completed(futures):
        results.append(await next_done)
    return results
