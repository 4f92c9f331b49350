# mistake: detects the loop thread with asyncio.get_event_loop(), which raises RuntimeError in a plain worker thread that has no loop set (and is deprecated/raising in the main thread on 3.12+/3.14)
# violates: only the loop thread itself is refused
# the red team's words: "only the loop thread itself is refused: any other thread is served (callers in threads of their own get RuntimeError instead of the result)"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if asyncio.get_event_loop() is loop_thread.loop:
        coro.close()
        raise RuntimeError("call_with_deadline called on the loop thread: it would deadlock")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
