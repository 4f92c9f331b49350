# mistake: keeps the in-flight future on the LoopThread object (so it "can be cancelled later") and cancels loop_thread.pending on timeout: with concurrent callers it is whichever caller submitted last
# violates: its result, or its own exception, reaches the caller || the coroutine cancelled on its loop
# the red team's words: "leave other callers' coroutines alone / on timeout, cancel the coroutine (the one that timed out) on the loop"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        coro.close()
        raise RuntimeError("call_with_deadline would block its own loop thread")
    loop_thread.pending = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return loop_thread.pending.result(timeout=timeout)
    except TimeoutError:
        loop_thread.pending.cancel()
        raise
