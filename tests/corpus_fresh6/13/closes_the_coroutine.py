# mistake: on timeout "cancels" by calling coro.close() from the caller's thread instead of cancelling the task on its loop
# violates: the timed-out coroutine is cancelled on its loop (its cleanup runs there), and no task is left pending or broken
# from: red team, session 6 (unseen tests)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        if future.done():
            raise  # the coroutine's own TimeoutError
        coro.close()  # stop the coroutine where it is suspended
        raise
