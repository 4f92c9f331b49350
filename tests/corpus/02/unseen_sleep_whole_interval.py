# mistake: checks the deadline correctly but always sleeps a whole interval before looking again
# violates: raise TimeoutError once `timeout` has passed: a
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "TimeoutError comes once timeout seconds have passed ... not a whole interval late when interval is longer than timeout"
# breaks: with interval 0.5 and timeout 0.1, TimeoutError comes after ~0.5 s
# how: wait_until(lambda: False, 0.5, 0.1) takes 0.5 s instead of ~0.1 s
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
        await asyncio.sleep(interval)
