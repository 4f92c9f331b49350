# mistake: compares with <= instead of < (red team, issue 28)
# violates: a text of exactly inline_below characters was scored in the service's process
# breaks: only texts SHORTER than inline_below are scored inline (a text of exactly inline_below chars goes to the pool)
# how: compares with <= instead of <
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results: list = [None] * len(texts)
    pending = {}
    for i, text in enumerate(texts):
        if len(text) <= inline_below:
            results[i] = score(text)
        else:
            pending[i] = loop.run_in_executor(pool, score, text)
    done = await asyncio.gather(*pending.values())
    for i, value in zip(pending, done):  # noqa: B905 - the red team's code, as written
        results[i] = value
    return results
