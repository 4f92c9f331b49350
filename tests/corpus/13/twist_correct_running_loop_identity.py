# correct: tells the loop thread by its running loop (asyncio.get_running_loop() is loop_thread.loop), not by the thread object, and waits with concurrent.futures.wait
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    import concurrent.futures

    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop_thread.loop:
        coro.close()
        raise RuntimeError("refusing to block the loop that would have to run this coroutine")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    done, _ = concurrent.futures.wait([future], timeout=timeout)
    if not done:
        future.cancel()
        raise TimeoutError(f"no result within {timeout} s")
    return future.result()
