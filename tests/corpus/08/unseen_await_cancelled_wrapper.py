# mistake: after wait_for times out, sets the event and awaits the same (unshielded) future to "wait for the thread"
# violates: CancelledError
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait until the thread has returned ... and only then let the TimeoutError ... propagate"
# breaks: wait_for already cancelled the asyncio wrapper, so awaiting it returns at once (CancelledError) while the thread still runs; the caller gets CancelledError, not TimeoutError
# how: 20 x 0.05 s steps, timeout 0.05: the caller sees CancelledError and the thread has not stopped yet
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    fut = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(fut, timeout)
    except BaseException:
        stop.set()
        await fut
        raise
