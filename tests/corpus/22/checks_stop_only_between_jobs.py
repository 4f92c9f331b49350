# mistake: checks the stop flag only after the next job has come off the queue, so it waits for one more job
# violates: which arrived after SIGTERM, was started
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    in_flight: set[asyncio.Task] = set()
    while not stop.is_set():
        job = await intake.get()
        task = asyncio.create_task(handle(job))
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
    return 143 if pending else 0
