# mistake: written as a correct answer (caller-side timeout on the concurrent future; on timeout cancels it and then waits (via a second submitted coroutine) until the loop-side task has really finished) against a statement then silent on this path; the Graded list now settles it the other way
# violates: overran its budget
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    holder = {}

    async def runner():
        holder["task"] = asyncio.current_task()
        return await coro

    fut = asyncio.run_coroutine_threadsafe(runner(), loop_thread.loop)
    try:
        return fut.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        fut.cancel()

        async def settle():
            task = holder.get("task")
            if task is not None:
                await asyncio.wait({task})

        asyncio.run_coroutine_threadsafe(settle(), loop_thread.loop).result(timeout=5)
        raise TimeoutError(f"coroutine did not finish within {timeout} s") from None
