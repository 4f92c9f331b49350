# mistake: sends the short texts to a thread with asyncio.to_thread ("never run work on the loop") instead of scoring them directly in the coroutine, paying a trip to the default thread pool for work smaller than the trip
# violates: directly in the coroutine
# from: red team, session 4 (unseen tests)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    pending = []
    for text in texts:
        if len(text) < inline_below:
            pending.append(asyncio.to_thread(score, text))
        else:
            pending.append(loop.run_in_executor(pool, score, text))
    return list(await asyncio.gather(*pending))
