# correct: recognises the loop thread by asyncio.get_running_loop() being loop_thread.loop (true in coroutines and callbacks there, false in other threads even with their own loop), waits with concurrent.futures.wait, and boxes the outcome on the loop so the coroutine's own exception object (a TimeoutError included, which run_coroutine_threadsafe re-creates on 3.11/3.12) reaches the caller unchanged
# from: red team of session 14, who saw the statement only
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:  # no loop running in this thread
        running = None
    if running is loop_thread.loop:
        coro.close()
        raise RuntimeError("call_with_deadline cannot block the loop it would run on")

    async def outcome():
        try:
            return True, await coro
        except Exception as exc:  # handed back as it is, not converted by the future
            return False, exc

    future = asyncio.run_coroutine_threadsafe(outcome(), loop_thread.loop)
    done, _ = concurrent.futures.wait([future], timeout=timeout)
    if not done:
        future.cancel()  # the task awaits coro directly: the cancellation reaches it
        raise TimeoutError(f"no result within {timeout} s")
    ok, value = future.result()
    if ok:
        return value
    raise value
