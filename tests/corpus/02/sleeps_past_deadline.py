# mistake: always sleeps a whole interval, even when the deadline is nearer
# violates: raise TimeoutError once `timeout` has passed
# breaks: raise TimeoutError when `timeout` has passed (not up to a whole interval later)
# how: always sleeps a full interval, even when the deadline is nearer, so with interval > timeout it raises at `interval`
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
        await asyncio.sleep(interval)
