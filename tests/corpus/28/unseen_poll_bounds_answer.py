# mistake: waits at most `poll` for each answer (wait_for(ref, poll)) and asks again when the answer is slow
# violates: mutual exclusion broken
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "the event loop keeps running while acquire waits ... for a slow answer"; mutual exclusion ("none may return before its answer is True")
# breaks: a slow answer is abandoned, but the actor call still runs and may take the lock for nobody; later attempts then see it held
# how: free lock whose answers take 50 ms, poll 0.01: every attempt is abandoned, the first abandoned call takes the lock, acquire ends in TimeoutError and the lock stays held
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while loop.time() < deadline:
        attempts += 1
        try:
            if await asyncio.wait_for(lock.try_acquire.remote(), poll):
                return attempts
        except TimeoutError:
            continue
        await asyncio.sleep(poll)
    raise TimeoutError("lock still held")
