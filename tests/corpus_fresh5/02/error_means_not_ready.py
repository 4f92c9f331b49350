# mistake: treats an exception from is_ready() as "not ready yet" and keeps polling
# violates: an exception from is_ready() comes out of wait_until at once, unchanged
# from: red team, session 5 (unseen tests)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    checks = 0
    while True:
        checks += 1
        try:
            ready = is_ready()
        except Exception:  # a flaky probe is just "not ready yet"
            ready = False
        if ready:
            return checks
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError(f"not ready after {timeout} s")
        await asyncio.sleep(min(interval, remaining))
