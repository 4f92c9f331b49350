# mistake: the concurrent future does not hand back the asyncio Task, so on timeout it cancels "what is pending" on the loop: every task there, in a callback sent with call_soon_threadsafe (the deadline is kept, the cleanup not waited for)
# violates: its result, or its own exception, reaches the caller
# the red team's words: "leave the loop and other callers' coroutines alone"; from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    if threading.current_thread() is loop_thread.thread:
        coro.close()
        raise RuntimeError("call_with_deadline would block its own loop thread")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        def cancel_pending() -> None:
            for task in asyncio.all_tasks(loop_thread.loop):
                task.cancel()
        loop_thread.loop.call_soon_threadsafe(cancel_pending)
        raise
