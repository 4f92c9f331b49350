# mistake: installs the SIGTERM handler with signal.signal instead of loop.add_signal_handler, so the handler runs but an idle loop keeps sleeping in select() until some timer wakes it
# violates: was not handled until something else woke the event loop
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    stop = asyncio.Event()
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    in_flight: set[asyncio.Task] = set()
    stop_seen = asyncio.create_task(stop.wait())
    try:
        while True:
            next_job = asyncio.create_task(intake.get())
            await asyncio.wait({next_job, stop_seen}, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set():
                next_job.cancel()
                await asyncio.wait([next_job], timeout=1)
                break
            task = asyncio.create_task(handle(next_job.result()))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
        pending = set()
        if in_flight:
            _, pending = await asyncio.wait(in_flight, timeout=budget)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)
        return 128 + signal.SIGTERM if pending else 0
    finally:
        stop_seen.cancel()
        signal.signal(signal.SIGTERM, previous)
