# mistake: schedules checks at fixed times start + k*interval, so a slow is_ready() eats into the pause
# violates: spacing: at least interval of waiting between one check's end and the next check
# from: red team, session 5 (unseen tests)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = start + timeout
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        now = loop.time()
        if now >= deadline:
            raise TimeoutError(f"not ready after {timeout} s")
        next_check = min(start + checks * interval, deadline)  # no drift
        await asyncio.sleep(max(0.0, next_check - now))
