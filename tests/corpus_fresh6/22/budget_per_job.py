# mistake: drains with one asyncio.wait_for per job in turn, so each job gets its own budget and the drain can last budget × jobs
# violates: one budget for the whole drain, not one per job; return never later than the two budgets
# from: red team, session 6 (unseen tests)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    jobs = []
    stop_wait = asyncio.ensure_future(stopping.wait())
    getter = None
    try:
        while True:
            getter = asyncio.ensure_future(intake.get())
            await asyncio.wait({getter, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            if stopping.is_set():
                break
            jobs.append(asyncio.create_task(handle(getter.result())))
        status = 0
        for job in jobs:
            if job.done():
                continue
            try:
                await asyncio.wait_for(job, timeout=budget)  # cancels it when its time is up
            except TimeoutError:
                status = 143
            except Exception:
                pass  # a job that raised has simply ended
        return status
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        helpers = [h for h in (getter, stop_wait) if h is not None]
        for helper in helpers:
            helper.cancel()
        await asyncio.wait(helpers, timeout=1)
