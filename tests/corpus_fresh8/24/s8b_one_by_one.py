# mistake: awaits each pool call before handing the next text to the pool
# violates: at once -- "the long texts all handed to the pool before the first of them is awaited"
# from: red team, session 8 (unseen tests)
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
