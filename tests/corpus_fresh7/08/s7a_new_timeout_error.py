# mistake: turns every TimeoutError into its own fresh TimeoutError, the work's own one included (and sets stop for it)
# violates: errors -- "a TimeoutError of its own included ... comes out of run_with_deadline unchanged"
# from: red team, session 7 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    future = loop.run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        stop.set()
        await asyncio.wait([future])
        if isinstance(exc, TimeoutError):
            raise TimeoutError(f"work exceeded its {timeout} s deadline") from None
        raise
