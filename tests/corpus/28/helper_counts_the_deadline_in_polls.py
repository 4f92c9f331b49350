# mistake: turns the timeout into a number of attempts (timeout / poll), which forgets the time each answer takes, so with slow answers the TimeoutError comes far too late
# violates: one deadline, counted from the call's start
# from: written by the helper who wrote the generators (issue 37)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    for attempts in range(1, int(timeout / poll) + 2):
        if await lock.try_acquire.remote():
            return attempts
        await asyncio.sleep(poll)
    raise TimeoutError(f"lock not acquired within {timeout} s")
