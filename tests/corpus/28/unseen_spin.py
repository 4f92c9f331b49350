# mistake: yields with asyncio.sleep(0) between attempts instead of pausing `poll`
# violates: asks in a tight loop: two attempts came
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "pause poll seconds between attempts"; "attempts are at least poll apart"
# breaks: a held lock is asked thousands of times a second
# how: lock held for 0.1 s, poll 0.02: hundreds of attempts instead of ~5
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while loop.time() < deadline:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        await asyncio.sleep(0)
    raise TimeoutError("lock still held")
