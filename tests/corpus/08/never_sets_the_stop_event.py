# mistake: relies on wait_for to stop the work; the thread never hears about the deadline
# violates: the stop event was not set
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    loop = asyncio.get_running_loop()
    return await asyncio.wait_for(loop.run_in_executor(pool, work, stop), timeout)
