# mistake: waits between checks with time.sleep, which blocks the event loop
# violates: the event loop was blocked
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    deadline = time.monotonic() + timeout
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        if time.monotonic() >= deadline:
            raise TimeoutError("not ready in time")
        time.sleep(interval)
