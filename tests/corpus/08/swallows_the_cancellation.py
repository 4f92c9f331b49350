# mistake: catches CancelledError, cleans up well, and then returns instead of re-raising
# violates: the cancellation must propagate
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.shield(future)
    except TimeoutError:
        stop.set()
        await asyncio.wait([future], timeout=5)
        raise
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([future], timeout=5)
        return None
