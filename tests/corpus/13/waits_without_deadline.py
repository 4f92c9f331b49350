# mistake: waits on result() without a timeout, and only afterwards compares the time taken to the deadline
# violates: TimeoutError must reach the caller at the deadline
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    started = time.monotonic()
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    result = future.result()
    if time.monotonic() - started > timeout:
        future.cancel()
        raise TimeoutError(f"took longer than {timeout} s")
    return result
