# mistake: polls in a background task and waits for it with wait_for on an Event, never cancelling the poller
# violates: a condition that already holds must be seen at once: check before the first sleep, and
# from: written by the helper who wrote the generators (issue 37)
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    done = asyncio.Event()
    checks = 0

    async def poll():
        nonlocal checks
        while True:
            checks += 1
            if is_ready():
                done.set()
                return
            await asyncio.sleep(interval)

    asyncio.create_task(poll())
    await asyncio.wait_for(done.wait(), timeout)
    return checks
