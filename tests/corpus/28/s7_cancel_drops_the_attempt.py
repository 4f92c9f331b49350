# mistake: a cancel that lands while an attempt is in flight drops it; if that attempt took the lock, nobody releases it
# violates: the lock was left taken by nobody
# from: red team, session 7 (unseen tests); accepted on its first run, closed in session 8 by a cancel during an attempt that takes the lock
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while True:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        remaining = deadline - loop.time()
        if remaining <= poll:
            if remaining > 0:
                await asyncio.sleep(remaining)
            raise TimeoutError(f"lock still held after {timeout} s")
        await asyncio.sleep(poll)
