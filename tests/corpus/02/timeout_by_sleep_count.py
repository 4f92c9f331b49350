# mistake: counts elapsed time as the sum of the requested sleeps
# violates: raise TimeoutError once `timeout` has passed
# breaks: raise TimeoutError once `timeout` seconds have passed since the start (real time, not the sum of requested sleeps)
# how: counts elapsed time as checks * interval; each sleep overshoots, so the real wait runs well past timeout
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    checks = 0
    waited = 0.0
    while True:
        checks += 1
        if is_ready():
            return checks
        if waited >= timeout:
            raise TimeoutError(f"not ready after {timeout} s")
        await asyncio.sleep(interval)
        waited += interval
