# mistake: scores inline up to and including inline_below characters (`<=`)
# violates: a text of exactly inline_below characters was scored in the service
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "score texts shorter than inline_below characters directly in the coroutine"; every other text goes to the pool
# breaks: a text of exactly inline_below characters is scored in the service's process
# how: inline_below=1000 and a 1000-character text: its pid is the service's, not a pool worker's
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    loop = asyncio.get_running_loop()
    futures = {i: loop.run_in_executor(pool, score, t) for i, t in enumerate(texts) if len(t) > inline_below}
    done = dict(zip(futures, await asyncio.gather(*futures.values())))
    return [done[i] if i in done else score(t) for i, t in enumerate(texts)]
