# mistake: counts the finished tasks as len(tasks) - len(still running) after the grace period, reading the caller's set again; a set that drops its tasks as they finish (the chapter 03 idiom, `add_done_callback(running.discard)`) has shrunk by then, so the count comes out too low
# violates: finished = every task done within the grace period
# from: red team, session 4 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return (0, 0)
    _, pending = await asyncio.wait(tasks, timeout=grace)
    finished = len(tasks) - len(pending)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (finished, len(pending))
