# mistake: wraps the whole loop in asyncio.timeout, which abandons an attempt in flight at the deadline
# violates: nothing left -- an attempt already sent must be awaited; if it answered True the lock is left "taken by nobody"
# from: red team, session 7 (unseen tests)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    attempts = 0
    async with asyncio.timeout(timeout):
        while True:
            attempts += 1
            if await lock.try_acquire.remote():
                return attempts
            await asyncio.sleep(poll)
