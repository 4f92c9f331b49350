# mistake: runs the work with asyncio.to_thread (the loop's default executor) instead of the given pool
# violates: the work ran in thread
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "run work(stop_event) on pool without blocking the loop"
# breaks: the work runs on a thread of the default executor, outside the pool the caller sized and owns (its max_workers bound and its shutdown do not apply)
# how: a pool whose threads are named "given-pool": the work runs on an "asyncio_N" thread
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    task = asyncio.ensure_future(asyncio.to_thread(work, stop))
    try:
        return await asyncio.wait_for(asyncio.shield(task), timeout)
    except BaseException:
        stop.set()
        await asyncio.wait({task})
        raise
