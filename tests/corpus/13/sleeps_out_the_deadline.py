# mistake: sleeps the whole timeout, then looks whether the future is done, so every call lasts its full deadline
# violates: call_with_deadline did not return when the work was done
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    time.sleep(timeout)
    if future.done():
        return future.result()
    future.cancel()
    raise TimeoutError(f"the coroutine did not finish within {timeout} s")
