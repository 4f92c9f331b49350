# mistake: keeps the pending future on the shared loop thread object, so one caller's timeout cancels another's call
# violates: the coroutine cancelled on its loop: it ran on after the deadline; cancel the future || its result, or its own exception, reaches the caller
# from: written by the helper who wrote the generators (issue 37)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    loop_thread.pending = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return loop_thread.pending.result(timeout=timeout)
    except TimeoutError:
        loop_thread.pending.cancel()
        raise
