# mistake: copies the page's LoopThread.run and adds the cancel: called on the loop thread itself, it blocks that thread for the whole deadline (the loop cannot run the coroutine meanwhile) and raises TimeoutError
# violates: called on the loop thread itself, call_with_deadline raises RuntimeError at once
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
