# mistake: on the loop thread, falls back to asyncio.run(coro), which refuses at once with RuntimeError but does not close the coroutine it was given (the chapter's cell closes it itself)
# violates: the coroutine handed in is closed, never run
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        return asyncio.run(coro)  # no other thread to wait on: run it here
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
