# correct: the deadline on the loop's clock; a cancel mid-attempt gives the lock back from a done callback instead of awaiting the answer; a last pause of exactly what is left
# from: red team, session 7 (their own reference solution, written from the statement)
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    attempts = 0
    while True:
        attempts += 1
        answer = asyncio.ensure_future(lock.try_acquire.remote())
        try:
            took = await asyncio.shield(answer)  # awaited to its answer, however late
        except asyncio.CancelledError:
            def give_back(done) -> None:  # the attempt was sent: if it took the lock, free it
                if not done.cancelled() and done.exception() is None and done.result():
                    lock.release.remote()
            answer.add_done_callback(give_back)
            raise
        if took:
            return attempts
        remaining = deadline - loop.time()
        if remaining <= poll:  # no further attempt fits before the deadline
            if remaining > 0:
                await asyncio.sleep(remaining)
            raise TimeoutError(f"lock still held after {timeout} s ({attempts} attempts)")
        await asyncio.sleep(poll)
