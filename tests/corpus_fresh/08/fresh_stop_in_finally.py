# mistake: sets the stop event in a `finally` ("always tidy up"), so work that returned in time also has its stop event set
# violates: its stop event is never set
# from: red team, session 4 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except BaseException:
        stop.set()
        await asyncio.wait({future})
        raise
    finally:
        stop.set()
