# mistake: waits out the grace period with return_when=FIRST_EXCEPTION (as for a group that fails together), so one task failing early ends the grace period and the tasks that would still have finished in time are cancelled
# violates: every task still running after the grace period, and only those
# from: red team, session 4 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace, return_when=asyncio.FIRST_EXCEPTION)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (len(done), len(pending))
