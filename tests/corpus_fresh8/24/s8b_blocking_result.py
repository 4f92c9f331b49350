# mistake: submits all long texts at once but collects them with a blocking Future.result()
# violates: loop free -- "the event loop keeps running while the pool works (no blocking wait inside `score_all`)"
# from: red team, session 8 (unseen tests)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    futures = [None if len(t) < inline_below else pool.submit(score, t) for t in texts]
    return [score(t) if f is None else f.result() for t, f in zip(texts, futures)]
