# mistake: a check that raises counts as "not ready yet"
# violates: an error from is_ready() must come out
# from: written by the helper who wrote the generators (issue 37)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    checks = 0
    while True:
        checks += 1
        try:
            ready = is_ready()
        except Exception:
            ready = False
        if ready:
            return checks
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"not ready after {timeout} s")
        await asyncio.sleep(min(interval, left))
