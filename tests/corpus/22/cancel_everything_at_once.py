# mistake: on SIGTERM cancels every job at once, without giving in-flight work its budget
# violates: could have finished within the budget and was cancelled
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    in_flight: set[asyncio.Task] = set()
    stop_seen = asyncio.create_task(stop.wait())
    while True:
        next_job = asyncio.create_task(intake.get())
        await asyncio.wait({next_job, stop_seen}, return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set():
            next_job.cancel()
            break
        task = asyncio.create_task(handle(next_job.result()))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    loop.remove_signal_handler(signal.SIGTERM)
    pending = set(in_flight)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=2)
    return 143 if pending else 0
