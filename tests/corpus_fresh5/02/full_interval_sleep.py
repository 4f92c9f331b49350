# mistake: always sleeps a whole interval before looking at the clock again, so it can sleep past the deadline
# violates: TimeoutError at the deadline, not up to a whole interval late when interval > timeout
# from: red team, session 5 (unseen tests)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        if loop.time() - start >= timeout:
            raise TimeoutError(f"not ready after {timeout} s")
        await asyncio.sleep(interval)
