# mistake: waits between checks with time.sleep, as in a synchronous poller
# violates: the event loop was blocked while wait_until waited: no other task ran for
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait interval seconds without blocking the event loop"
# breaks: the loop is frozen for each interval; the task that would set the flag cannot run
# how: flag set by another task after 0.05 s, interval 0.03: a heartbeat task sees gaps of ~30 ms
import time

async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    start = time.monotonic()
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        if time.monotonic() - start >= timeout:
            raise TimeoutError("not ready")
        time.sleep(interval)
