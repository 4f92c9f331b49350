# mistake: sets the stop event and lets the exception out while the thread is still winding down
# violates: still running when TimeoutError reached the caller
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.shield(future)
    finally:
        if not future.done():
            stop.set()
