# mistake: waits for each cancelled task in turn with asyncio.wait([t], timeout=cleanup_budget) (red team, issue 28)
# violates: four cleanups of 2 s) overran its budget
# breaks: the whole cleanup wait is at most cleanup_budget (per-task budgets add up)
# how: waits for each cancelled task in turn with asyncio.wait([t], timeout=cleanup_budget)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    for t in pending:
        await asyncio.wait([t], timeout=cleanup_budget)
    return len(done), len(pending)
