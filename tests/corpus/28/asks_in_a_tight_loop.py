# mistake: asks again at once after every refusal (no pause between attempts)
# violates: asks in a tight loop
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    deadline = time.monotonic() + timeout
    attempts = 0
    while time.monotonic() < deadline:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
    raise TimeoutError("lock not acquired in time")
