# mistake: runs the work with asyncio.to_thread, on the default pool, not on `pool`
# violates: not on `pool`
# from: written by the helper who wrote the generators (issue 37)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    stop = threading.Event()
    task = asyncio.ensure_future(asyncio.to_thread(work, stop))
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.shield(task)
    finally:
        if not task.done():
            stop.set()
            await asyncio.wait([task], timeout=5)
