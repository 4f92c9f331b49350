# mistake: scores every text directly in the coroutine, long ones included
# violates: a long text was scored in the service's own process
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    return [score(text) for text in texts]
