# mistake: one module-level stop Event, cleared at the start of each call, shared by all calls
# violates: several calls at once -- "each has its own stop event, so one call's deadline stops only its own work"
# from: red team, session 7 (unseen tests)
STOP = threading.Event()


async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    loop = asyncio.get_running_loop()
    STOP.clear()
    future = loop.run_in_executor(pool, work, STOP)
    try:
        done, _ = await asyncio.wait([future], timeout=timeout)
    except asyncio.CancelledError:
        STOP.set()
        await asyncio.wait([future])
        raise
    if done:
        return future.result()
    STOP.set()
    await asyncio.wait([future])
    raise TimeoutError(f"work did not finish within {timeout} s")
