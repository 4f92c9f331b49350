# mistake: bounds the coroutine with asyncio.wait_for on the loop and waits for that, so TimeoutError comes only after the cancelled coroutine's cleanup
# violates: TimeoutError at the deadline, not later, even when the cancelled coroutine takes 0.2 s to clean up
# from: red team, session 6 (unseen tests)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""

    async def bounded():
        # wait_for cancels the coroutine on its own loop when the time is up
        return await asyncio.wait_for(coro, timeout)

    future = asyncio.run_coroutine_threadsafe(bounded(), loop_thread.loop)
    return future.result(timeout=timeout + 5)  # a safety bound; wait_for does the real one
