# mistake: sleeps before the first check ("give it a moment first")
# violates: a condition that already holds must be seen at once: check before the first sleep, and
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "the first check comes before any wait, and a check that sees True returns ... at once"
# breaks: a condition that already holds costs a whole interval
# how: wait_until(lambda: True, 0.3, 1) takes 0.3 s instead of returning immediately
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    checks = 0
    while True:
        await asyncio.sleep(min(interval, max(0.0, deadline - loop.time())))
        checks += 1
        if is_ready():
            return checks
        if loop.time() >= deadline:
            raise TimeoutError("not ready")
