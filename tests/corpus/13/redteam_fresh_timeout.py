# mistake: on TimeoutError raises a new, more descriptive TimeoutError; since 3.11 concurrent.futures.TimeoutError is the builtin, so the coroutine's own TimeoutError is caught and replaced too
# violates: its own exception as it is reaches the caller
# the red team's words: "hand back the coroutine's own exception as it is (a `TimeoutError` of its own included)"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        coro.close()
        raise RuntimeError("call_with_deadline would block its own loop thread")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"coroutine did not finish within {timeout} s") from None
