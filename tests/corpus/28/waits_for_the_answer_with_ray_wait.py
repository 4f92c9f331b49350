# mistake: waits for each answer with ray.wait(timeout=poll), the chapter's poll, inside async def
# violates: blocked the event loop
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    deadline = time.monotonic() + timeout
    attempts = 0
    while time.monotonic() < deadline:
        attempts += 1
        ref = lock.try_acquire.remote()
        ready, _ = ray.wait([ref], timeout=max(poll, deadline - time.monotonic()))
        if ready and await ref:
            return attempts
        await asyncio.sleep(poll)
    raise TimeoutError("lock not acquired in time")
