# mistake: drains with wait_for(gather(*jobs), budget): a job that raises ends the drain with its error, and the timeout's cancel waits for every cleanup without a bound
# violates: a job that raises has simply ended (its error neither stops the service nor changes the status); a cleanup that hangs must not hang the stop
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
        try:
            # gather waits for all of them; wait_for cancels them all when the budget is spent
            await asyncio.wait_for(asyncio.gather(*jobs), timeout=budget)
            return 0
        except TimeoutError:
            return 143
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        helpers = [h for h in (getter, stop_wait) if h is not None]
        for helper in helpers:
            helper.cancel()
        await asyncio.wait(helpers, timeout=1)
