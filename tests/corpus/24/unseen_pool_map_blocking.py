# mistake: sends the long texts with pool.map and collects with list(), inside the coroutine
# violates: score_all blocked the event loop for
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "with loop.run_in_executor"; "the event loop free while the pool works (no blocking wait inside score_all)"
# breaks: the loop is frozen while the pool scores the long texts
# how: a heartbeat task sees a gap as long as the pool work
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    long_idx = [i for i, t in enumerate(texts) if len(t) >= inline_below]
    long_results = list(pool.map(score, [texts[i] for i in long_idx]))
    by_index = dict(zip(long_idx, long_results))
    return [by_index[i] if i in by_index else score(t) for i, t in enumerate(texts)]
