# mistake: waits first and explains afterwards: on the loop thread it still blocks for the whole deadline, and only then turns the TimeoutError into RuntimeError
# violates: call_with_deadline raises RuntimeError at once
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        if threading.current_thread() is loop_thread.thread:
            raise RuntimeError("called on the loop's own thread: the coroutine could not run") from None
        raise
