# mistake: after cancelling the late jobs it waits for their cleanup with gather and no bound
# violates: the cleanup wait lasts no longer than `budget` more: a cleanup that hangs must not hang the stop
# from: red team, session 6 (unseen tests)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    jobs = set()
    stop_wait = asyncio.ensure_future(stopping.wait())
    getter = None
    try:
        while True:
            getter = asyncio.ensure_future(intake.get())
            await asyncio.wait({getter, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            if stopping.is_set():
                break
            jobs.add(asyncio.create_task(handle(getter.result())))
        in_flight = {job for job in jobs if not job.done()}
        if not in_flight:
            return 0
        _, pending = await asyncio.wait(in_flight, timeout=budget)
        if not pending:
            return 0
        for job in pending:
            job.cancel()
        await asyncio.gather(*pending, return_exceptions=True)  # cancel, then wait (chapter 05)
        return 143
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        helpers = [h for h in (getter, stop_wait) if h is not None]
        for helper in helpers:
            helper.cancel()
        await asyncio.wait(helpers, timeout=1)
