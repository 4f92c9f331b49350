# correct: checks the deadline after the pause as well as after each attempt; its TimeoutError comes when the reference's does (the Graded list measures the deadline beside the reference, which pauses a whole poll too)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; sent in as a wrong answer (checks the deadline between attempts but always pauses a whole `poll`, and does not bound a slow answer; the red team's reading: "TimeoutError, and within the deadline, when the lock stays held"), the first run accepted it
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while True:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        if loop.time() >= deadline:
            raise TimeoutError("lock still held")
        await asyncio.sleep(poll)
        if loop.time() >= deadline:
            raise TimeoutError("lock still held")
