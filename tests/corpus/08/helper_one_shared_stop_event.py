# mistake: one module-level stop event, cleared at each call, shared by every call
# violates: give each call a stop event of its own
# from: written by the helper who wrote the generators (issue 37)
_SHARED_STOP = threading.Event()


async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    stop = _SHARED_STOP
    stop.clear()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.shield(future)
    finally:
        if not future.done():
            stop.set()
            await asyncio.wait([future], timeout=5)
