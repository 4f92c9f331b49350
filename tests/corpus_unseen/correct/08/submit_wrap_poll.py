# correct: pool.submit + asyncio.wait(timeout) on the wrapped future; cleanup in finally waits on the concurrent future via a done-check loop
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    cfut = pool.submit(work, stop)
    ok = False
    try:
        done, _ = await asyncio.wait({asyncio.wrap_future(cfut)}, timeout=timeout)
        if not done:
            raise TimeoutError(f"work did not finish within {timeout} s")
        ok = True
        return cfut.result()
    finally:
        if not ok:
            stop.set()
            while not cfut.done():
                try:
                    await asyncio.sleep(0.001)
                except asyncio.CancelledError:
                    continue
