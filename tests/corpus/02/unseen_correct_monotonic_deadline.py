# correct: loop.time() deadline, each sleep clamped to the time left
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        left = deadline - loop.time()
        if left <= 0:
            raise TimeoutError(f"not ready after {timeout} s ({checks} checks)")
        await asyncio.sleep(min(interval, left))
