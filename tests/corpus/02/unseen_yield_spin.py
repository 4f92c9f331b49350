# mistake: keeps the loop free with sleep(0) but never waits the interval (busy polling)
# violates: do not spin
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "it waits about interval between checks instead of spinning"
# breaks: is_ready() is called thousands of times per second
# how: flag set after 0.05 s with interval 0.01: ~5 checks expected, hundreds counted
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
        if loop.time() >= deadline:
            raise TimeoutError("not ready")
        await asyncio.sleep(0)
