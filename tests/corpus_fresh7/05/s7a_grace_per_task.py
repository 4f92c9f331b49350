# mistake: gives each task its own grace period, one after another
# violates: when it returns -- "grace and cleanup_budget bound the whole drain (not each task)"
# from: red team, session 7 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    finished, stragglers = 0, []
    for task in list(tasks):
        done, _ = await asyncio.wait({task}, timeout=grace)
        if done:
            finished += 1
        else:
            task.cancel()
            stragglers.append(task)
    if stragglers:
        await asyncio.wait(stragglers, timeout=cleanup_budget)
    return (finished, len(stragglers))
