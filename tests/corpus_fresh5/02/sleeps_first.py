# mistake: waits one interval before the first check, so a condition that already holds is seen an interval late
# violates: the first check comes before any wait; a ready condition returns at once
# from: red team, session 5 (unseen tests)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    checks = 0
    while True:
        await asyncio.sleep(min(interval, max(0.0, deadline - loop.time())))
        checks += 1
        if is_ready():
            return checks
        if loop.time() >= deadline:
            raise TimeoutError(f"not ready after {timeout} s")
