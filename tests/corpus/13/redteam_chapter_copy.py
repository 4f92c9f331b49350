# mistake: copied the chapter's older solution (submit, result(timeout), cancel on timeout) and never handled a call made on the loop thread itself
# violates: called on the loop thread itself, call_with_deadline raises RuntimeError at once
# the red team's words: "on the loop thread: `RuntimeError` at once, the coroutine handed in closed and never run (here the loop blocks itself until the deadline and raises TimeoutError)"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
