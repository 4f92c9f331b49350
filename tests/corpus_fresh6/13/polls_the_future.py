# mistake: waits by polling future.done() every 50 ms instead of blocking on the future
# violates: the result reaches the caller as soon as the coroutine ends (a polling wait hears of it a round late)
# from: red team, session 6 (unseen tests)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    deadline = time.monotonic() + timeout
    while not future.done():
        left = deadline - time.monotonic()
        if left <= 0:
            future.cancel()
            raise TimeoutError(f"no result within {timeout} s")
        time.sleep(min(0.05, left))
    return future.result()
