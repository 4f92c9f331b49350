# mistake: handles the deadline (set stop, wait for the thread) but not the caller's cancellation
# violates: cancellation -- "stop set, thread finished, then the CancelledError"
# from: red team, session 7 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    future = loop.run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except TimeoutError:
        if future.done():
            raise
        stop.set()
        await asyncio.wait([future])
        raise
