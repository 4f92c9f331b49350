# mistake: turns every TimeoutError out of the wait into a fresh TimeoutError with its own message, so work that raises a TimeoutError of its own in time (its socket's, say) reaches the caller as a different exception, with the work's message lost
# violates: an exception raised by `work` comes out unchanged
# from: s5holesB (issue 37), the wrong answer fresh_new_timeout_error of chapter 13 made in chapter 08
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        if not future.done():
            stop.set()
            await asyncio.wait({future})
        if isinstance(exc, TimeoutError):
            raise TimeoutError(f"the work did not finish within {timeout} s") from None
        raise
