# mistake: asks asyncio.get_event_loop() which loop this thread has: in a thread with no loop (every caller's own thread) that raises RuntimeError instead of answering "none"
# violates: only the loop thread itself is refused
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if asyncio.get_event_loop() is loop_thread.loop:
        coro.close()
        raise RuntimeError("call_with_deadline called on its loop's own thread")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
