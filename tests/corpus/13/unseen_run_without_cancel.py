# mistake: uses loop_thread.run(coro, timeout): result(timeout) raises TimeoutError, nothing is cancelled
# violates: the coroutine was not cancelled on its loop after the timeout: a timeout on the waiting
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "on timeout, cancel the coroutine on the loop so it does not run on unseen"
# breaks: after the TimeoutError the coroutine keeps running on the loop thread and later completes its side effects
# how: coroutine sleeps 0.3 s then sets a flag; timeout 0.05: the flag is set 0.3 s later and the task was pending on the loop
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    return loop_thread.run(coro, timeout)
