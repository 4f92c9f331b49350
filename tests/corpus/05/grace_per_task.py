# mistake: gives each task its own grace period and cleanup budget in turn, so three slow tasks make the drain last three grace periods
# violates: drain (grace 1 s, cleanup_budget 1 s, three slow tasks) overran its budget
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    finished = cancelled = 0
    for task in tasks:
        done, _ = await asyncio.wait({task}, timeout=grace)
        if done:
            finished += 1
        else:
            task.cancel()
            await asyncio.wait({task}, timeout=cleanup_budget)
            cancelled += 1
    return finished, cancelled
