# mistake: awaits the answer (good) but pauses with time.sleep(poll)
# violates: acquire, waiting for a held lock blocked the event loop for
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "never block the event loop while you wait (no ray.get, no time.sleep)"
# breaks: the loop freezes for `poll` on every failed attempt; with a held lock it is frozen most of the time
# how: lock held, poll 0.05: a heartbeat task sees 50 ms gaps
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    start = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        if time.monotonic() - start >= timeout:
            raise TimeoutError("lock still held")
        time.sleep(poll)
