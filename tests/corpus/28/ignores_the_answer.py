# mistake: sends try_acquire and returns without looking at its answer
# violates: mutual exclusion broken
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    async with asyncio.timeout(timeout):
        await lock.try_acquire.remote()
    return 1
