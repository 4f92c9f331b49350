# mistake: written as a correct answer (one loop.time() deadline; each answer awaited with wait_for(remaining); sleep min(poll, remaining)) against a statement then silent on this path; the Graded list now settles it the other way
# violates: acquire must return once try_acquire has answered True || the lock was left taken by nobody
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError(f"lock still held after {timeout} s ({attempts} attempts)")
        attempts += 1
        if await asyncio.wait_for(lock.try_acquire.remote(), remaining):
            return attempts
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError(f"lock still held after {timeout} s ({attempts} attempts)")
        await asyncio.sleep(min(poll, remaining))
