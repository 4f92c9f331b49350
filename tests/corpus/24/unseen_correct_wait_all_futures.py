# correct: submits the long texts first, scores the short ones inline while the pool works, then asyncio.wait for all futures and reads results by index
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    slots = [loop.run_in_executor(pool, score, t) if len(t) >= inline_below else None for t in texts]
    out = [score(t) if fut is None else None for t, fut in zip(texts, slots)]
    futures = [f for f in slots if f is not None]
    if futures:
        await asyncio.wait(futures)
    return [o if f is None else f.result() for o, f in zip(out, slots)]
