# mistake: yields with asyncio.sleep(0) between checks, so it polls as fast as the loop turns
# violates: do not spin
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    deadline = time.monotonic() + timeout
    checks = 0
    while time.monotonic() < deadline:
        checks += 1
        if is_ready():
            return checks
        await asyncio.sleep(0)
    raise TimeoutError("not ready in time")
