# mistake: pool.submit() for every long text, then future.result() inside the coroutine: concurrent in the pool, but the loop is blocked until all are done (red team, issue 28)
# violates: score_all blocked the event loop
# breaks: the event loop keeps running while the pool works (never block the loop)
# how: pool.submit() for every long text, then future.result() inside the coroutine: concurrent in the pool, but the loop is blocked until all are done
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    futures = {}
    for i, text in enumerate(texts):
        if len(text) >= inline_below:
            futures[i] = pool.submit(score, text)
    await asyncio.sleep(0)
    return [futures[i].result() if i in futures else score(text) for i, text in enumerate(texts)]
