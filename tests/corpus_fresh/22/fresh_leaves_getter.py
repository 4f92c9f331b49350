# mistake: races a pending intake.get() task against SIGTERM and, once SIGTERM wins, leaves that getter task pending on the queue, where it is still running after the return and would swallow the next job
# violates: no task `run_service` started still running
# from: red team, session 4 (unseen tests)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    import signal

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        jobs: set = set()
        stopper = asyncio.create_task(stop.wait())
        getter = asyncio.create_task(intake.get())
        while True:
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if stopper in done:
                break
            job = asyncio.create_task(handle(getter.result()))
            jobs.add(job)
            job.add_done_callback(jobs.discard)
            getter = asyncio.create_task(intake.get())
        in_flight = set(jobs)
        if not in_flight:
            return 0
        _, pending = await asyncio.wait(in_flight, timeout=budget)
        if not pending:
            return 0
        for job in pending:
            job.cancel()
        await asyncio.wait(pending, timeout=budget)
        return 143
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
