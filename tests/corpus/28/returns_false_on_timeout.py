# mistake: reports a timeout by returning False instead of raising
# violates: must raise TimeoutError
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    deadline = time.monotonic() + timeout
    attempts = 0
    while time.monotonic() < deadline:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        await asyncio.sleep(poll)
    return False
