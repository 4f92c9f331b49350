# mistake: applies `timeout` to each attempt's answer (wait_for per call) instead of to the whole call
# violates: one deadline, counted from the call's start
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "give up with TimeoutError once timeout seconds have passed since the call began (one deadline for the whole call, not one per attempt)"
# breaks: a lock that stays held (answers False quickly) is polled forever; no TimeoutError
# how: lock held for good, timeout 0.3: still polling after 1 s
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    attempts = 0
    while True:
        attempts += 1
        if await asyncio.wait_for(lock.try_acquire.remote(), timeout):
            return attempts
        await asyncio.sleep(poll)
