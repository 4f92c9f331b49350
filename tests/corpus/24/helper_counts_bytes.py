# mistake: measures a text's size in UTF-8 bytes, so a short text that is not ASCII goes to the pool
# violates: a short text
# from: written by the helper who wrote the generators (issue 37)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results: list = [None] * len(texts)
    pending = {}
    for index, text in enumerate(texts):
        if len(text.encode()) < inline_below:
            results[index] = score(text)
        else:
            pending[index] = loop.run_in_executor(pool, score, text)
    for index, result in zip(pending, await asyncio.gather(*pending.values()), strict=True):
        results[index] = result
    return results
