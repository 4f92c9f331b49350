# mistake: after cancelling, gives the cleanups a fixed grace of 0.1 s instead of up to `budget`
# violates: the cleanup of cancelled work had not finished
# from: written by the helper who wrote the generators (issue 37)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    in_flight: set = set()
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
            await asyncio.wait(pending, timeout=0.1)  # a cleanup is quick
        return 128 + signal.SIGTERM if pending else 0
    finally:
        stop_seen.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
