# mistake: waits with wait_for(gather(...)), so the first task error escapes from drain
# violates: drain must not raise
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return 0, 0
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=grace)
    except TimeoutError:
        pass
    cancelled = sum(1 for t in tasks if t.cancelled())
    return len(tasks) - cancelled, cancelled
