# mistake: runs the polling loop in a Task and bounds it with asyncio.wait, which neither cancels it on timeout nor when the caller is cancelled
# violates: no task left running when the call ends (timeout or cancellation)
# from: red team, session 5 (unseen tests)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    async def poll() -> int:
        checks = 0
        while True:
            checks += 1
            if is_ready():
                return checks
            await asyncio.sleep(interval)

    poller = asyncio.create_task(poll())
    done, _ = await asyncio.wait({poller}, timeout=timeout)
    if poller in done:
        return poller.result()
    raise TimeoutError(f"not ready after {timeout} s")
