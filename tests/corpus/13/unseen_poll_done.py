# mistake: sleeps the deadline away in steps of a tenth of the timeout and only then looks at the future
# violates: a return as soon as the coroutine ends, or at the deadline
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "its result ... reaches the caller as soon as it ends (not at the deadline)"
# breaks: a result that is ready at once is only noticed at the next tick, up to timeout/10 late
# how: timeout 2 s, coroutine 10 ms: the call returns after ~0.2 s instead of ~10 ms
import time as _time

def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    fut = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    deadline = _time.monotonic() + timeout
    while _time.monotonic() < deadline:
        _time.sleep(timeout / 10)
        if fut.done():
            return fut.result()
    fut.cancel()
    try:
        fut.result(timeout=5)
    except BaseException:
        pass
    raise TimeoutError("deadline passed")
