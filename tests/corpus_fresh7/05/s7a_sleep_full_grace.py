# mistake: always sleeps the whole grace period before looking at the tasks
# violates: grace -- "return early if they all finish sooner" / when it returns -- "as soon as every task is done"
# from: red team, session 7 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    tasks = set(tasks)
    await asyncio.sleep(grace)
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (len(tasks) - len(pending), len(pending))
