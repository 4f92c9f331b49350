# mistake: turns the deadline into a number of attempts, timeout / poll, ignoring how long each answer takes
# violates: the deadline -- "not much after it ... however long each answer takes" (one deadline for the whole call)
# from: red team, session 7 (unseen tests)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    max_attempts = max(1, int(timeout / poll))
    for attempts in range(1, max_attempts + 1):
        if await lock.try_acquire.remote():
            return attempts
        await asyncio.sleep(poll)
    raise TimeoutError(f"lock still held after {max_attempts} attempts")
