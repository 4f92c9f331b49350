# mistake: returns the inline results followed by the pool results
# violates: results in the order of texts
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "return the list of score(text) results, in the order of texts"
# breaks: when short and long texts are interleaved, the results come back grouped by route
# how: ["a"*5000, "x"]: returns [score("x"), score("a"*5000)]
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    short = [score(t) for t in texts if len(t) < inline_below]
    long = await asyncio.gather(*(loop.run_in_executor(pool, score, t) for t in texts if len(t) >= inline_below))
    return short + list(long)
