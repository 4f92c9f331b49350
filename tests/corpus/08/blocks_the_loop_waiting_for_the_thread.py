# mistake: waits for the thread in cleanup with the concurrent future's blocking result()
# violates: the event loop was blocked while waiting for the thread
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    cf = pool.submit(work, stop)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.wrap_future(cf)
    finally:
        if not cf.done():
            stop.set()
            cf.result(timeout=5)  # make sure the thread is finished
