# mistake: cancels the leftovers and returns at once, without waiting for their cleanup
# violates: cleanup -- "every cancelled task's cleanup is over when drain returns"
# from: red team, session 7 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    tasks = set(tasks)
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    return (len(done), len(pending))
