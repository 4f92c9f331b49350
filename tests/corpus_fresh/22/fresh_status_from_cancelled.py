# mistake: decides the status from task.cancelled() after the cleanup wait, so a job that had to be cancelled but whose cleanup is still running (or that handled the cancel and returned) counts as finished and the status is 0
# violates: `143` if some had to be cancelled
# from: red team, session 4 (unseen tests)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    import signal

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        jobs: list = []
        stopper = asyncio.create_task(stop.wait())
        while True:
            getter = asyncio.create_task(intake.get())
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if stopper in done:
                getter.cancel()
                await asyncio.wait({getter})
                break
            jobs.append(asyncio.create_task(handle(getter.result())))
        running = [job for job in jobs if not job.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=budget)
            for job in pending:
                job.cancel()
            if pending:
                await asyncio.wait(pending, timeout=budget)
        return 143 if any(job.cancelled() for job in jobs) else 0
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
