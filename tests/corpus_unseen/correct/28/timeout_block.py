# correct: asyncio.timeout() for the whole call around a simple ask/pause loop
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    attempts = 0
    async with asyncio.timeout(timeout):
        while True:
            attempts += 1
            if await lock.try_acquire.remote():
                return attempts
            await asyncio.sleep(poll)
