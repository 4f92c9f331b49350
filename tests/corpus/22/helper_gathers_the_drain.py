# mistake: drains with asyncio.gather inside asyncio.timeout, so one job's error ends the service
# violates: bound the wait for the cancelled jobs too
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
        left = set(in_flight)
        try:
            async with asyncio.timeout(budget):
                await asyncio.gather(*left)
            return 0
        except TimeoutError:
            pending = {t for t in left if not t.done()}
            if pending:
                await asyncio.wait(pending, timeout=budget)
            return 128 + signal.SIGTERM
    finally:
        stop_seen.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
