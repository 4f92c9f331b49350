# mistake: bounds the cleanup wait with asyncio.timeout around gather(*cancelled); when the budget runs out the timeout cancels the gather, which cancels every task a second time and cuts short a cleanup that was still running
# violates: a cleanup longer than `cleanup_budget`, which is left to run, not cut short
# from: red team, session 4 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    if pending:
        try:
            async with asyncio.timeout(cleanup_budget):
                await asyncio.gather(*pending, return_exceptions=True)
        except TimeoutError:
            pass
    return (len(done), len(pending))
