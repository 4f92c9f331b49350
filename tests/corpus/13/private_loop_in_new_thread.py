# mistake: runs the coroutine with asyncio.run on a fresh loop in a helper thread, not on loop_thread.loop
# violates: ran outside the loop thread it was given
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    async def bounded():
        return await asyncio.wait_for(coro, timeout)
    # asyncio.run refuses to run where a loop is already running, so give it a thread
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as helper:
        return helper.submit(asyncio.run, bounded()).result()
