# mistake: checks the deadline between attempts but always pauses a whole `poll`, and does not bound a slow answer
# violates: "TimeoutError, and within the deadline, when the lock stays held"
# breaks: with poll longer than the time left (or a slow answer) the TimeoutError comes late
# how: lock held, poll 0.5, timeout 0.2: TimeoutError after ~0.5 s
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while True:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        if loop.time() >= deadline:
            raise TimeoutError("lock still held")
        await asyncio.sleep(poll)
        if loop.time() >= deadline:
            raise TimeoutError("lock still held")
