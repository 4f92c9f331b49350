# mistake: catches every TimeoutError from result(), including the coroutine's own, and raises a new one in its place
# violates: the coroutine's own exception reaches the caller as it is (its own TimeoutError included)
# from: red team, session 6 (unseen tests)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()  # cancels the task on the loop
        raise TimeoutError(f"no result within {timeout} s") from None
