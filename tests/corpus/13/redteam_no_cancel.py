# mistake: bounds the wait with result(timeout) and lets TimeoutError propagate, but never cancels the submitted coroutine
# violates: the coroutine was not cancelled on its loop after the timeout
# the red team's words: "on timeout, cancel the coroutine on the loop so it does not run on unseen"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        coro.close()
        raise RuntimeError("call_with_deadline would block its own loop thread")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    return future.result(timeout=timeout)
