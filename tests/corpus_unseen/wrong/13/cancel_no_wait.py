# mistake: on timeout calls fut.cancel() and raises at once
# violates: "the coroutine cancelled on its loop, with no task left pending there" (when the caller gets TimeoutError)
# breaks: Future.cancel() only schedules the task's cancellation on the loop; when TimeoutError is raised, the task is still pending and its cleanup has not run
# how: coroutine whose finally awaits 50 ms of cleanup: at the caller's except, the cleanup has not finished
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    fut = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return fut.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        fut.cancel()
        raise TimeoutError("deadline passed") from None
