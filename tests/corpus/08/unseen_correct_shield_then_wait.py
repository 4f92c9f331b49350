# correct: wait_for on a shielded executor future; on any exit path set the event and wait for the (unshielded) future
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    fut = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(fut), timeout)
    except BaseException:
        stop.set()
        await asyncio.wait({fut})
        raise
