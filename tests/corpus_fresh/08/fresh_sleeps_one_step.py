# mistake: reads "it will, within a step" as a fixed delay: after setting stop it sleeps 50 ms instead of waiting for the thread, so work that needs longer to wind down is still running when the TimeoutError or CancelledError comes out
# violates: when it reaches the caller, the stop event is set and the thread has already finished
# from: red team, session 4 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except (TimeoutError, asyncio.CancelledError):
        stop.set()
        await asyncio.sleep(0.05)  # the work returns within a step
        raise
