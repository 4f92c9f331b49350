# mistake: offloads the long texts with asyncio.to_thread ("run_in_executor with the default executor")
# violates: a long text was scored in the service
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "send every other text to the process pool pool"; "long ones in the pool"
# breaks: long texts are scored in threads of the service's own process, sharing its GIL
# how: the pid returned for a long text is os.getpid(), not a pool worker's
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    jobs = [asyncio.to_thread(score, t) if len(t) >= inline_below else None for t in texts]
    pending = [j for j in jobs if j is not None]
    got = iter(await asyncio.gather(*pending))
    return [next(got) if j is not None else score(t) for j, t in zip(jobs, texts)]
