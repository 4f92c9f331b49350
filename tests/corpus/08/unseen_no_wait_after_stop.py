# mistake: wait_for on the executor future; on TimeoutError sets the event and re-raises immediately
# violates: the thread was still running when TimeoutError reached the caller: after setting stop
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "set the event, wait until the thread has returned, and only then let the TimeoutError ... propagate"
# breaks: when TimeoutError reaches the caller the thread is still in the middle of a step
# how: 20 steps of 0.05 s, timeout 0.05: at the except, the log has no "stopped before step" entry yet
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.wait_for(loop.run_in_executor(pool, work, stop), timeout)
    except (TimeoutError, asyncio.CancelledError):
        stop.set()
        raise
