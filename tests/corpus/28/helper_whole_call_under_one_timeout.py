# mistake: puts the whole loop under asyncio.timeout, so an attempt still in flight at the deadline is abandoned; if its answer is True the lock stays taken by nobody
# violates: acquire must return once try_acquire has answered True || the lock was left taken by nobody
# from: written by the helper who wrote the generators (issue 37)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    attempts = 0
    async with asyncio.timeout(timeout):
        while True:
            attempts += 1
            if await lock.try_acquire.remote():
                return attempts
            await asyncio.sleep(poll)
