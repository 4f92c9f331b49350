# mistake: lets the TimeoutError propagate but leaves the coroutine running on the loop
# violates: not cancelled on its loop after the timeout
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    return future.result(timeout=timeout)
