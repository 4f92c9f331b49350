# mistake: on timeout cancels every task on the loop, the other callers' coroutines too
# violates: its result, or its own exception, reaches the caller
# from: written by the helper who wrote the generators (issue 37)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        def cancel_all():
            for task in asyncio.all_tasks(loop_thread.loop):
                task.cancel()
        loop_thread.loop.call_soon_threadsafe(cancel_all)
        raise
