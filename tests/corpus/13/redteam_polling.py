# mistake: waits by polling future.done() every 50 ms against a monotonic deadline instead of blocking on the future
# violates: a wait woken by the coroutine's end, not a poll
# the red team's words: "result: its end wakes the caller's wait (a wait that polls hears of it a round late, and wakes many times for nothing)"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        coro.close()
        raise RuntimeError("call_with_deadline would block its own loop thread")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    deadline = time.monotonic() + timeout
    while not future.done():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            future.cancel()
            raise TimeoutError(f"no result within {timeout} s")
        time.sleep(min(0.05, remaining))
    return future.result()
