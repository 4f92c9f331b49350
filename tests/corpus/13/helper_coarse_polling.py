# mistake: polls the future every 0.2 s and gives up when a poll finds the deadline passed
# violates: a return as soon as the coroutine ends, or at the deadline
# from: written by the helper who wrote the generators (issue 37)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if future.done():
            return future.result()
        time.sleep(0.2)
    if future.done():
        return future.result()
    future.cancel()
    raise TimeoutError
