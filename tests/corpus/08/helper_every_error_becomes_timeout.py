# mistake: reports any failure of the work as a TimeoutError
# violates: let its error out unchanged
# from: written by the helper who wrote the generators (issue 37)
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.shield(future)
    except Exception:
        stop.set()
        await asyncio.wait([future], timeout=5)
        raise TimeoutError(f"no result within {timeout} s") from None
    finally:
        if not future.done():
            stop.set()
            await asyncio.wait([future], timeout=5)
