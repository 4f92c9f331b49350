# mistake: waits for each job in turn with its own wait_for(shield(job), budget), so n jobs may get n budgets (red team, issue 28)
# violates: one budget for the whole drain
# breaks: the whole drain fits in `budget` (per-job timeouts add up past it)
# how: waits for each job in turn with its own wait_for(shield(job), budget), so n jobs may get n budgets
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    running = []
    stopper = asyncio.create_task(stop.wait())
    try:
        while True:
            getter = asyncio.create_task(intake.get())
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if stopper in done:
                getter.cancel()
                break
            running.append(asyncio.create_task(handle(getter.result())))

        pending = set()
        for task in running:
            try:
                await asyncio.wait_for(asyncio.shield(task), budget)
            except TimeoutError:
                pending.add(task)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)
        return 143 if pending else 0
    finally:
        stopper.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
