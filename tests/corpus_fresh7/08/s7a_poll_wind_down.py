# mistake: after setting stop it polls the future every 0.25 s instead of awaiting it
# violates: deadline -- TimeoutError "no later than the work's wind-down needs"
# from: red team, session 7 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    future = loop.run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except (TimeoutError, asyncio.CancelledError):
        if future.done():
            raise
        stop.set()
        while not future.done():
            await asyncio.sleep(0.25)
        raise
