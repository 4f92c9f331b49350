# correct: each pause is min(poll, time left); when the time left is shorter than poll it sleeps that and gives up without another attempt; a cancel mid-attempt waits for the answer with asyncio.wait, then releases
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    end = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        pending = asyncio.ensure_future(lock.try_acquire.remote())
        try:
            await asyncio.wait({pending})
        except asyncio.CancelledError:
            await asyncio.wait({pending})
            if not pending.cancelled() and pending.exception() is None and pending.result():
                await lock.release.remote()
            raise
        if pending.result():
            return attempts
        pause = min(poll, end - time.monotonic())
        await asyncio.sleep(max(pause, 0))
        if pause < poll:
            raise TimeoutError(f"no lock after {timeout} s")
