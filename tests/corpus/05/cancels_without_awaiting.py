# mistake: cancels the tasks left after the grace period but returns before their cleanup ran
# violates: wait for the cancelled tasks' cleanup before returning
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return 0, 0
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    return len(done), len(pending)
