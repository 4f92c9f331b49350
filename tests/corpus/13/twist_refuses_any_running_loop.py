# mistake: refuses whenever the calling thread runs any loop (asyncio.run's own test), so the notebook's thread, which runs a loop of its own and could wait, is refused too
# violates: only the loop thread itself is refused
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop here: safe to block
    else:
        coro.close()
        raise RuntimeError("call_with_deadline cannot be called from a running event loop")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
