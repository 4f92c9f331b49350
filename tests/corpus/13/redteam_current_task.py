# mistake: detects "on the loop thread" with asyncio.current_task(loop) is not None, which only sees calls made from inside a task: a callback on the loop thread is missed, and another thread's call is refused if some task happens to be mid-step on the loop at that instant
# violates: called on the loop thread itself, call_with_deadline raises RuntimeError at once
# the red team's words: "called on the loop thread (from a coroutine or a callback running there), raise `RuntimeError` at once instead of waiting"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if asyncio.current_task(loop_thread.loop) is not None:
        coro.close()
        raise RuntimeError("call_with_deadline called from a task on its own loop")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
