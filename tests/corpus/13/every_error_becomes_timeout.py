# mistake: catches every exception from result() and turns it into TimeoutError, so the coroutine's own error is reported as a timeout
# violates: when the coroutine raises, must raise JobFailed
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except Exception as exc:
        future.cancel()
        raise TimeoutError(f"the coroutine did not finish within {timeout} s") from exc
