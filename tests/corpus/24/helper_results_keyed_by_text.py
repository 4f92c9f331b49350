# mistake: keeps the results in a dict keyed by the text, so a repeated text is scored once
# violates: scored more than once, or not at all
# from: written by the helper who wrote the generators (issue 37)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    by_text: dict = {}
    pending = {}
    for text in texts:
        if text in by_text or text in pending:
            continue
        if len(text) < inline_below:
            by_text[text] = score(text)
        else:
            pending[text] = loop.run_in_executor(pool, score, text)
    for text, result in zip(pending, await asyncio.gather(*pending.values()), strict=True):
        by_text[text] = result
    return [by_text[text] for text in texts]
