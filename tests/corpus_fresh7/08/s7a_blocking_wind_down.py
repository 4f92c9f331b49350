# mistake: on the deadline it sets stop and then blocks on the concurrent future's result() to wait for the thread
# violates: the loop stays free -- "while the call waits, the wind-down included"
# from: red team, session 7 (unseen tests)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    stop = threading.Event()
    cf = pool.submit(work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(cf)), timeout)
    except (TimeoutError, asyncio.CancelledError):
        if cf.done():
            raise
        stop.set()
        try:
            cf.result()  # wait for the thread to return
        except Exception:
            pass
        raise
