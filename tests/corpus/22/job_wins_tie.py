# mistake: waits for "a job or SIGTERM" and, when both are ready in the same turn of the loop, starts the job first, so a job taken at the moment SIGTERM arrives starts after SIGTERM
# violates: a job that arrives after SIGTERM never starts: job
# from: red team, session 4 (unseen tests)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    import signal

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    jobs: set = set()
    stopper = asyncio.create_task(stop.wait())
    try:
        while True:
            getter = asyncio.create_task(intake.get())
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                job = asyncio.create_task(handle(getter.result()))
                jobs.add(job)
                job.add_done_callback(jobs.discard)
            else:
                getter.cancel()
                await asyncio.wait({getter})
            if stopper in done:
                break
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
        stopper.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
