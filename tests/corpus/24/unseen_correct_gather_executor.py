# correct: one pass builds a list of either a value or an executor future, then a single gather over the futures fills the slots
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results: list = [None] * len(texts)
    remote = {}
    for i, text in enumerate(texts):
        if len(text) >= inline_below:
            remote[i] = loop.run_in_executor(pool, score, text)
    for i, text in enumerate(texts):
        if i not in remote:
            results[i] = score(text)
    if remote:
        for i, value in zip(remote, await asyncio.gather(*remote.values())):
            results[i] = value
    return results
