# mistake: awaits the actor's answer but pauses between attempts with time.sleep
# violates: blocked the event loop
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        if time.monotonic() >= deadline:
            raise TimeoutError("lock not acquired in time")
        time.sleep(poll)
