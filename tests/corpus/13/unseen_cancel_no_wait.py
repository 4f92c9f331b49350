# mistake: on timeout cancels the future and raises at once (right: the Graded list lets the cleanup finish after TimeoutError reaches the caller), but it catches every TimeoutError, so a coroutine's own TimeoutError reaches the caller as a new TimeoutError("deadline passed") (filed as correct until session 5 drew a coroutine raising its own TimeoutError; the same mistake as fresh_new_timeout_error)
# violates: its own exception as it is reaches the caller
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; sent in as a wrong answer (on timeout calls fut.cancel() and raises at once; the red team's reading: "the coroutine cancelled on its loop, with no task left pending there" (when the caller gets TimeoutError)), the first run accepted it
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    fut = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return fut.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        fut.cancel()
        raise TimeoutError("deadline passed") from None
