# mistake: waits out the grace with asyncio.timeout around gather(*tasks): a failing task's error escapes drain
# violates: errors -- "drain never raises" / counts -- "a task that ended with an error ... counts as finished"
# from: red team, session 7 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    tasks = set(tasks)
    if not tasks:
        return (0, 0)
    try:
        async with asyncio.timeout(grace):
            await asyncio.gather(*tasks)
    except TimeoutError:
        pass
    cancelled = [t for t in tasks if t.cancelled() or not t.done()]
    for task in cancelled:
        task.cancel()
    if cancelled:
        await asyncio.wait(cancelled, timeout=cleanup_budget)
    return (len(tasks) - len(cancelled), len(cancelled))
