# mistake: counts as "finished" only the tasks that returned a result
# violates: finished = every task done within the grace period, errors included
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "A task that ended with an error during the grace period counts as finished"
# breaks: a request that failed within the grace period is counted nowhere
# how: one request fails at 0.01 s, one succeeds, grace 0.2: (1, 0) instead of (2, 0)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    finished = sum(1 for t in done if t.exception() is None)
    return (finished, len(pending))
