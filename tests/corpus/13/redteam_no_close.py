# mistake: refuses the loop thread correctly but just raises, forgetting to close the coroutine it was handed
# violates: was never awaited
# the red team's words: "close `coro` unrun: no coroutine left never awaited (RuntimeWarning 'coroutine ... was never awaited' when it is collected)"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        raise RuntimeError("call_with_deadline would block its own loop thread")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
