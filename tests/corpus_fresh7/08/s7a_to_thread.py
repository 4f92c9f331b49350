# mistake: runs the work with asyncio.to_thread (the default executor) instead of on the given pool
# violates: several calls at once -- "the work runs on pool"
# from: red team, session 7 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    stop = threading.Event()
    task = asyncio.create_task(asyncio.to_thread(work, stop))
    try:
        done, _ = await asyncio.wait([task], timeout=timeout)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([task])
        raise
    if done:
        return task.result()
    stop.set()
    await asyncio.wait([task])
    raise TimeoutError(f"work did not finish within {timeout} s")
