# mistake: turns a cancellation of the wait into TimeoutError
# violates: the caller cancelled wait_until
# from: written by the helper who wrote the generators (issue 37)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"not ready after {timeout} s")
        try:
            await asyncio.sleep(min(interval, left))
        except asyncio.CancelledError:
            raise TimeoutError("gave up") from None
