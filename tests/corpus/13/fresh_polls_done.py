# mistake: polls the future every 10 ms with time.sleep instead of blocking on it, so the result (or the TimeoutError) reaches the caller up to one poll after the coroutine ended (or the deadline passed)
# violates: a wait woken by the coroutine's end, not a poll
# from: red team, session 4 (unseen tests)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    deadline = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() >= deadline:
            future.cancel()
            raise TimeoutError(f"no result within {timeout} s")
        time.sleep(0.01)
    return future.result()
