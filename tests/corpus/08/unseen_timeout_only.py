# mistake: handles the deadline properly but only catches TimeoutError, not cancellation
# violates: the stop event was not set when the task was cancelled
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if the deadline passes, or the coroutine is cancelled, set the event, wait until the thread has returned"
# breaks: when the caller cancels, the event is never set and the thread runs all its steps after the CancelledError
# how: cancel run_with_deadline (timeout 5) after 50 ms of 20 x 0.02 s steps: the thread finishes "all steps done" later
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    fut = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(fut), timeout)
    except TimeoutError:
        stop.set()
        await fut
        raise
