# mistake: installs the handler with add_signal_handler and never removes it (no finally) (red team, issue 28)
# violates: SIGTERM handler was still installed
# breaks: remove the SIGTERM handler before returning
# how: installs the handler with add_signal_handler and never removes it (no finally)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    running = set()
    stopper = asyncio.create_task(stop.wait())
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
    if pending:
        await asyncio.wait(pending, timeout=2)
    return 143 if pending else 0
