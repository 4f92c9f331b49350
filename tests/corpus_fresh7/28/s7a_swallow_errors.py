# mistake: treats an exception from try_acquire as "not free yet" and keeps asking until the deadline
# violates: errors -- "an exception from try_acquire (the actor died) reaches the caller, with no further attempt"
# from: red team, session 7 (unseen tests)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while True:
        attempts += 1
        try:
            took = await lock.try_acquire.remote()
        except Exception:
            took = False  # a hiccup on the actor: ask again
        if took:
            return attempts
        remaining = deadline - loop.time()
        if remaining <= poll:
            if remaining > 0:
                await asyncio.sleep(remaining)
            raise TimeoutError(f"lock still held after {timeout} s")
        await asyncio.sleep(poll)
