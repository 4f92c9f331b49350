# mistake: written as a correct answer (puts the deadline on the loop side (asyncio.timeout inside a wrapper), so cancellation and cleanup finish there before the future resolves) against a statement then silent on this path; the Graded list now settles it the other way
# violates: overran its budget
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    async def bounded():
        async with asyncio.timeout(timeout):
            return await coro

    fut = asyncio.run_coroutine_threadsafe(bounded(), loop_thread.loop)
    try:
        return fut.result()
    except BaseException:
        fut.cancel()
        raise
