# mistake: counts "finished" as len(tasks) - cancelled at the end, reading the live set after it has shrunk
# violates: counts -- wrong counts when tasks is a session's running set that drops finished tasks
# from: red team, session 7 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    cancelled = len(pending)
    return (len(tasks) - cancelled, cancelled)
