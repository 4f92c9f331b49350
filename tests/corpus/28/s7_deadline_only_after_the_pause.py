# mistake: checks the deadline only before each attempt, after a full poll pause, so a long poll overshoots it
# violates: one deadline, counted from the call's start
# from: red team, session 7 (unseen tests); accepted on its first run, closed in session 8 by a poll longer than the timeout
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while loop.time() < deadline:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        await asyncio.sleep(poll)
    raise TimeoutError(f"lock still held after {timeout} s")
