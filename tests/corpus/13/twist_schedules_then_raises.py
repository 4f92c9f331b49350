# mistake: on the loop thread, starts the coroutine as a task "so the work is not lost", then raises: the work runs with nobody to hear its result or bound it
# violates: the coroutine handed in is closed, never run
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        loop_thread.loop.create_task(coro)
        raise RuntimeError("cannot wait on the loop thread; the coroutine was started in the background")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
