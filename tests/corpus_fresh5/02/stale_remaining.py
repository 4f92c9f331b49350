# mistake: computes the time left before calling is_ready(), so a slow is_ready() makes the last sleep end past the deadline
# violates: TimeoutError on time even when is_ready() takes a while (never sleep past the deadline)
# from: red team, session 5 (unseen tests)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    checks = 0
    while True:
        remaining = deadline - loop.time()
        checks += 1
        if is_ready():
            return checks
        if remaining <= 0:
            raise TimeoutError(f"not ready after {timeout} s")
        await asyncio.sleep(min(interval, remaining))
