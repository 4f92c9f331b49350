# mistake: returns 143 when a job of the drain raised, not only when one had to be cancelled
# violates: wrong exit code
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
        done, pending = set(), set()
        if in_flight:
            done, pending = await asyncio.wait(in_flight, timeout=budget)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=budget)
        clean = not pending and all(t.exception() is None for t in done)
        return 0 if clean else 128 + signal.SIGTERM
    finally:
        stop_seen.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
