# mistake: pauses between attempts with time.sleep(poll), which blocks the event loop
# violates: the event loop -- "keeps running while acquire waits ... for a held lock"
# from: red team, session 7 (unseen tests)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        if time.monotonic() + poll > deadline:
            raise TimeoutError(f"lock still held after {timeout} s")
        time.sleep(poll)
