# mistake: cancels the coroutine on timeout but returns None instead of raising TimeoutError
# violates: TimeoutError must reach the caller
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        print(f"gave up after {timeout} s")
        return None
