# mistake: written as a correct answer (asyncio.timeout() for the whole call around a simple ask/pause loop) against a statement then silent on this path; the Graded list now settles it the other way
# violates: acquire must return once try_acquire has answered True || the lock was left taken by nobody
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    attempts = 0
    async with asyncio.timeout(timeout):
        while True:
            attempts += 1
            if await lock.try_acquire.remote():
                return attempts
            await asyncio.sleep(poll)
