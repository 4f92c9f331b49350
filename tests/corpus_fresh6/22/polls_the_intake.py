# mistake: takes jobs with wait_for(intake.get(), 0.1) and checks a stop flag between tries, so an idle service notices SIGTERM only at its next poll
# violates: a SIGTERM that arrives while the service is idle is handled at once (a loop that wakes itself to look hears it up to 0.1 s late)
# from: red team, session 6 (unseen tests)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    jobs = set()
    try:
        while not stopping.is_set():
            try:
                job = await asyncio.wait_for(intake.get(), timeout=0.1)
            except TimeoutError:
                continue  # look at the flag again
            if stopping.is_set():
                break
            jobs.add(asyncio.create_task(handle(job)))
        in_flight = {job for job in jobs if not job.done()}
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
