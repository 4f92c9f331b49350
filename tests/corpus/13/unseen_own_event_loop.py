# mistake: runs the coroutine with asyncio.run(wait_for(...)) in the caller's thread
# violates: RuntimeError: asyncio.run
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "run coro on loop_thread.loop (not in the caller's thread)"
# breaks: the coroutine runs in the caller's thread on a throwaway loop; loop-bound objects of the loop thread fail there
# how: a coroutine that records threading.current_thread(): it is the caller's thread, not the loop thread
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    return asyncio.run(asyncio.wait_for(coro, timeout))
