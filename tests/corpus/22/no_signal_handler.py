# mistake: drains and cancels correctly but never installs a SIGTERM handler, trusting the default
# violates: killed by SIGTERM instead of handling it
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    in_flight: set[asyncio.Task] = set()
    try:
        while True:
            job = await intake.get()
            task = asyncio.create_task(handle(job))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
    except asyncio.CancelledError:
        pass
    pending = set()
    if in_flight:
        _, pending = await asyncio.wait(in_flight, timeout=budget)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=2)
    return 143 if pending else 0
