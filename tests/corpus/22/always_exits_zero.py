# mistake: drains and cancels correctly but reports success even when work had to be cut
# violates: wrong exit code
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
    pending = set()
    if in_flight:
        _, pending = await asyncio.wait(in_flight, timeout=budget)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=2)
    return 0
