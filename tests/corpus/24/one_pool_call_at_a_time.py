# mistake: awaits each pool call before submitting the next, so the pool's workers never run together
# violates: the long texts went to the pool one at a time
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results = []
    for text in texts:
        if len(text) < inline_below:
            results.append(score(text))
        else:
            results.append(await loop.run_in_executor(pool, score, text))
    return results
