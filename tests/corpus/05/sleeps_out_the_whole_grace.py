# mistake: sleeps for the whole grace period, then looks at which tasks are done
# violates: return as soon as all are done
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    await asyncio.sleep(grace)
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return len(tasks) - len(pending), len(pending)
