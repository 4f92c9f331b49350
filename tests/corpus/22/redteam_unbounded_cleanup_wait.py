# mistake: awaits gather() of the cancelled jobs with no timeout, so a job whose cleanup hangs hangs the stop (red team, issue 28)
# violates: a cleanup that hangs
# breaks: wait (bounded) until the cancelled jobs cleanup is over
# how: awaits gather() of the cancelled jobs with no timeout; a job whose cleanup hangs hangs the stop
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    running = set()
    stopper = asyncio.create_task(stop.wait())
    try:
        while True:
            getter = asyncio.create_task(intake.get())
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if stopper in done:
                getter.cancel()
                break
            running.add(asyncio.create_task(handle(getter.result())))

        pending = set()
        if running:
            _, pending = await asyncio.wait(running, timeout=budget)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return 143 if pending else 0
    finally:
        stopper.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
