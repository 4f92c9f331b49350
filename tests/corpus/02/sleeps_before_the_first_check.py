# mistake: sleeps one interval before looking, even when the condition already holds
# violates: check before the first sleep
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    deadline = time.monotonic() + timeout
    checks = 0
    while time.monotonic() < deadline:
        await asyncio.sleep(interval)
        checks += 1
        if is_ready():
            return checks
    raise TimeoutError("not ready in time")
