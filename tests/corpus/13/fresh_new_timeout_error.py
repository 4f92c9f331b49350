# mistake: turns every TimeoutError out of fut.result into a fresh TimeoutError with a message, so a coroutine that itself raises TimeoutError (an inner asyncio.timeout) reaches the caller as a different exception, and the already finished future is "cancelled" for nothing
# violates: its own exception as it is reaches the caller
# from: red team, session 4 (unseen tests)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise TimeoutError(f"the coroutine did not finish within {timeout} s") from None
