# mistake: moves the long texts to threads with to_thread, which frees the loop but shares the GIL
# violates: a long text was scored in the service's own process
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    jobs = []
    for text in texts:
        if len(text) < inline_below:
            jobs.append(score_on_loop(text))
        else:
            jobs.append(asyncio.to_thread(score, text))
    return list(await asyncio.gather(*jobs))
