# mistake: keeps the loop free for short texts too by sending them to asyncio.to_thread
# violates: where -- "on the loop's own thread (not in a thread of their own, which costs a trip too)"
# from: red team, session 8 (unseen tests)
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    jobs = [asyncio.to_thread(score, t) if len(t) < inline_below
            else loop.run_in_executor(pool, score, t) for t in texts]
    return list(await asyncio.gather(*jobs))
