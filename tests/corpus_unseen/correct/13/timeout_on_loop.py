# correct: puts the deadline on the loop side (asyncio.timeout inside a wrapper), so cancellation and cleanup finish there before the future resolves
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    async def bounded():
        async with asyncio.timeout(timeout):
            return await coro

    fut = asyncio.run_coroutine_threadsafe(bounded(), loop_thread.loop)
    try:
        return fut.result()
    except BaseException:
        fut.cancel()
        raise
