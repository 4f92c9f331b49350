# mistake: always pauses a whole poll, also when the deadline comes inside the pause; with poll longer than timeout its TimeoutError comes a poll late
# violates: one deadline, counted from the call's start
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; sent in as a wrong answer (checks the deadline between attempts but always pauses a whole `poll`, and does not bound a slow answer; the red team's reading: "TimeoutError, and within the deadline, when the lock stays held"), the first run accepted it; session 8 made the contract say that a pause past the deadline is cut at it, and the reference cuts it, so this answer became wrong
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
