# mistake: on timeout cancels every task on the loop (the chapter's _cancel_other_tasks) and waits for them
# violates: only the timed-out coroutine is cancelled; the other callers' coroutines are untouched (and TimeoutError at the deadline)
# from: red team, session 6 (unseen tests)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    future = loop_thread.submit(coro)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        if not future.done():
            # leave nothing pending on the loop: cancel what is there and wait for it
            loop_thread.run(_cancel_other_tasks(), timeout=2)
            raise
        return future.result()
