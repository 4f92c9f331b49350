# mistake: scores each distinct long text once and reuses the result for its repeats
# violates: results / where -- "a repeated text scored each time" ... "every other text in the pool, each exactly once"
# from: red team, session 8 (unseen tests)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    futures = {}
    for text in texts:
        if len(text) >= inline_below and text not in futures:
            futures[text] = loop.run_in_executor(pool, score, text)
    pooled = dict(zip(futures, await asyncio.gather(*futures.values())))
    return [score(t) if len(t) < inline_below else pooled[t] for t in texts]
