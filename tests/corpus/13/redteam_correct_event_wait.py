# correct: compares thread idents, and waits on a threading.Event set by the future's done-callback (woken by the end, not polling) before reading the result; cancels via the concurrent future
# from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.get_ident() == loop_thread.thread.ident:
        coro.close()
        raise RuntimeError("call_with_deadline called on its own loop thread: it would deadlock")
    finished = threading.Event()
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    future.add_done_callback(lambda _: finished.set())
    if not finished.wait(timeout):
        future.cancel()  # cancels the task on the loop, via call_soon_threadsafe
        raise TimeoutError(f"no result within {timeout} s")
    return future.result()
