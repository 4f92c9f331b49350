# mistake: waits with time.sleep(interval) and then yields with asyncio.sleep(0)
# violates: the event loop was blocked
# breaks: wait between checks without blocking the event loop
# how: time.sleep(interval) followed by await asyncio.sleep(0): other tasks get a turn between checks, but the loop is frozen for each interval
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    start = time.monotonic()
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        if time.monotonic() - start >= timeout:
            raise TimeoutError(f"not ready after {timeout} s")
        time.sleep(interval)
        await asyncio.sleep(0)
