# mistake: puts the timeout on each attempt, so a lock that stays held is waited for forever
# violates: one deadline, counted from the call's start
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    attempts = 0
    while True:
        attempts += 1
        if await asyncio.wait_for(lock.try_acquire.remote(), timeout=timeout):
            return attempts
        await asyncio.sleep(poll)
