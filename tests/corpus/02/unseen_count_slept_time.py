# mistake: measures elapsed time by adding up the intervals slept instead of reading a clock
# violates: raise TimeoutError once `timeout` has passed in real time: checks that take
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "TimeoutError ... not late when is_ready() itself takes time"
# breaks: time spent inside is_ready() is not counted, so the timeout comes far too late
# how: is_ready sleeps 30 ms (blocking) each call, interval 0.01, timeout 0.1: raises after ~0.4 s, not ~0.1 s
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    waited = 0.0
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        if waited >= timeout:
            raise TimeoutError("not ready")
        step = min(interval, timeout - waited)
        await asyncio.sleep(step)
        waited += step
