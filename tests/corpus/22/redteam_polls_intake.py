# mistake: polls the intake with wait_for(get(), 0.2) and checks the stop flag only between polls, so a job arriving just after SIGTERM still starts (red team, issue 28)
# violates: which arrived after SIGTERM, was started
# breaks: once SIGTERM has arrived, start no new job
# how: polls the intake with wait_for(get(), 0.2) and checks the stop flag only between polls, so a job arriving just after SIGTERM still starts
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    running = set()
    try:
        while not stop.is_set():
            try:
                job = await asyncio.wait_for(intake.get(), 0.2)
            except TimeoutError:
                continue
            running.add(asyncio.create_task(handle(job)))
        pending = set()
        if running:
            _, pending = await asyncio.wait(running, timeout=budget)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)
        return 143 if pending else 0
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
