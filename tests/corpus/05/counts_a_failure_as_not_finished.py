# mistake: counts only the tasks that succeeded as finished
# violates: errors included
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return 0, 0
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    finished = sum(1 for t in done if t.exception() is None)
    return finished, len(pending)
