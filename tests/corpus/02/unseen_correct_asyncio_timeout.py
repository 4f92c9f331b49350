# correct: lets asyncio.timeout() enforce the deadline around a plain polling loop
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    checks = 0
    async with asyncio.timeout(timeout):
        while True:
            checks += 1
            if is_ready():
                return checks
            await asyncio.sleep(interval)
