# mistake: serialises the synchronous callers with one threading.Lock ("the loop is not thread-safe"), so a second caller's coroutine starts only after the first one's call is over, and its result and deadline come late
# violates: the other callers' coroutines and the loop itself are untouched
# from: red team, session 4 (unseen tests)
_one_at_a_time = threading.Lock()


def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    with _one_at_a_time:
        future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
        try:
            return future.result(timeout=timeout)
        except TimeoutError:
            future.cancel()
            raise
