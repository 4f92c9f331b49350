# mistake: awaits each long text's run_in_executor in the loop, one after the other
# violates: the long texts went to the pool one at a time: submit them all, then await them together
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "send every other text to the process pool ... all of them at once ... and await them together"
# breaks: the pool runs one long text at a time; the others wait their turn
# how: 3 long texts, pool of 3 workers: the pool's peak concurrency is 1 and the call takes 3x as long
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    results = []
    for text in texts:
        if len(text) < inline_below:
            results.append(score(text))
        else:
            results.append(await loop.run_in_executor(pool, score, text))
    return results
