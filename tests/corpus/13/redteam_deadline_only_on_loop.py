# mistake: puts the deadline on the loop side (asyncio.wait_for) and waits for the result with no timeout; a busy loop or a coroutine slow to cancel holds the caller (red team, issue 28)
# violates: a coroutine with a 1 s cleanup) overran its budget
# breaks: the caller waits at most `timeout` seconds
# how: puts the deadline on the loop side (asyncio.wait_for) and waits for the result with no timeout; a busy loop or a coroutine slow to cancel holds the caller
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coro, timeout), loop_thread.loop)
    return future.result()
