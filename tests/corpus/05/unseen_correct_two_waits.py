# correct: asyncio.wait with the grace timeout, cancel the rest, asyncio.wait again with the cleanup budget
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    tasks = set(tasks)
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (len(done), len(pending))
