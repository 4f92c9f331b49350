# mistake: asks the actor with ray.get inside async def (pausing with asyncio.sleep)
# violates: blocked the event loop
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        if ray.get(lock.try_acquire.remote()):
            return attempts
        if time.monotonic() >= deadline:
            raise TimeoutError("lock not acquired in time")
        await asyncio.sleep(poll)
