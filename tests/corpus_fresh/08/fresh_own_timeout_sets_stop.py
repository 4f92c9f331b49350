# mistake: takes any TimeoutError out of the wait for the deadline, so work that itself raises TimeoutError in time (its own socket timeout, say) gets its stop event set as if it had overrun
# violates: its stop event is never set
# from: red team, session 4 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except (TimeoutError, asyncio.CancelledError):
        stop.set()
        await asyncio.wait({future})
        raise
