# correct: asyncio.timeout() blocks around shielded gathers; counts from done() snapshot after grace
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    tasks = list(tasks)
    try:
        async with asyncio.timeout(grace):
            await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))
    except TimeoutError:
        pass
    left = [t for t in tasks if not t.done()]
    finished = len(tasks) - len(left)
    for t in left:
        t.cancel()
    if left:
        try:
            async with asyncio.timeout(cleanup_budget):
                await asyncio.shield(asyncio.gather(*left, return_exceptions=True))
        except TimeoutError:
            pass
    return (finished, len(left))
