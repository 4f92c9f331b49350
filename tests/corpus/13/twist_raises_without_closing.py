# mistake: spots the loop thread and raises at once, but drops the coroutine without closing it: it is left never awaited (Python warns when it is collected)
# violates: the coroutine handed in is closed, never run
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        raise RuntimeError("call_with_deadline would block its own loop")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
