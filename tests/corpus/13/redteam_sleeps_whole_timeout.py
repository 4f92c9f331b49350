# mistake: time.sleep(timeout) and then checks whether the future is done (red team, issue 28)
# violates: call_with_deadline did not return when the work was done
# breaks: return the result as soon as the coroutine ends (wait AT MOST timeout)
# how: time.sleep(timeout) and then checks whether the future is done
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    time.sleep(timeout)
    if future.done():
        return future.result()
    future.cancel()
    raise TimeoutError(f"no result within {timeout} s")
