# mistake: lets asyncio do the deadline on the loop (asyncio.wait_for) and waits for the outcome with no bound of its own; wait_for only raises once the cancelled coroutine has finished its cleanup
# violates: overran its budget
# the red team's words: "deadline: `TimeoutError` at the deadline, not later either, even when the cancelled coroutine is slow to clean up (and 'wait at most `timeout` seconds')"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        coro.close()
        raise RuntimeError("call_with_deadline would block its own loop thread")
    # wait_for cancels the coroutine on the loop itself, so no cross-thread cancel is needed
    future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coro, timeout), loop_thread.loop)
    return future.result()
