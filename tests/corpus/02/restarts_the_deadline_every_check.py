# mistake: computes the deadline inside the loop, so every wake-up restarts it
# violates: fix the deadline once
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    checks = 0
    while True:
        deadline = time.monotonic() + timeout
        checks += 1
        if is_ready():
            return checks
        await asyncio.sleep(interval)
        if time.monotonic() > deadline:
            raise TimeoutError("not ready in time")
