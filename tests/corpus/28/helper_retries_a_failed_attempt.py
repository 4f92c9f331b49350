# mistake: treats an exception from try_acquire like a refusal and keeps asking, so a dead actor ends in TimeoutError instead of its error
# violates: an error from try_acquire (the actor died) must reach the caller || one deadline, counted from the call's start
# from: written by the helper who wrote the generators (issue 37)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        try:
            ok = await lock.try_acquire.remote()
        except Exception:
            ok = False
        if ok:
            return attempts
        if time.monotonic() >= deadline:
            raise TimeoutError(f"lock not acquired within {timeout} s")
        await asyncio.sleep(poll)
