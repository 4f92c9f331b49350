# mistake: turns the timeout into a number of rounds (timeout / interval), ignoring the time is_ready() takes
# violates: the timeout is real elapsed time; a slow is_ready() must not push TimeoutError later
# from: red team, session 5 (unseen tests)
import math


async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    rounds = max(1, math.ceil(timeout / interval))
    for checks in range(1, rounds + 1):
        if is_ready():
            return checks
        await asyncio.sleep(min(interval, timeout))
    if is_ready():
        return rounds + 1
    raise TimeoutError(f"not ready after {timeout} s")
