# mistake: raises TimeoutError as soon as one more full interval would pass the deadline
# violates: keep checking until the deadline
# from: written by the helper who wrote the generators (issue 37)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        if time.monotonic() + interval > deadline:
            raise TimeoutError(f"not ready after {timeout} s")
        await asyncio.sleep(interval)
