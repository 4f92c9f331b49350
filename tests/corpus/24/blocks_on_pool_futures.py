# mistake: submits every long text to the pool at once, then collects them with future.result(), a blocking wait that holds the event loop while the workers run
# violates: score_all blocked the event loop
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    results: list = [None] * len(texts)
    futures = {}
    for index, text in enumerate(texts):
        if len(text) < inline_below:
            results[index] = score(text)
        else:
            futures[index] = pool.submit(score, text)
    for index, future in futures.items():
        results[index] = future.result(timeout=30)
    return results
