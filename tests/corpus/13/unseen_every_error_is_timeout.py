# mistake: treats any failure of result() as the deadline: cancels and raises TimeoutError
# violates: call_with_deadline, when the coroutine raises, must raise JobFailed; it raised
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "its result, or its own exception, reaches the caller as soon as it ends"
# breaks: a coroutine that raises ValueError reaches the caller as TimeoutError
# how: coroutine raising ValueError("bad reward"): the caller gets TimeoutError instead
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    async def bounded():
        return await asyncio.wait_for(coro, timeout)

    fut = asyncio.run_coroutine_threadsafe(bounded(), loop_thread.loop)
    try:
        return fut.result()
    except Exception:
        fut.cancel()
        raise TimeoutError("call did not complete") from None
