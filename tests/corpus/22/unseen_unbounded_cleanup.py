# mistake: after cancelling the late jobs, waits for them with gather(return_exceptions=True), no time limit
# violates: the service returned
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait until their cleanup is over, but no longer than budget seconds more (a cleanup that hangs must not hang the stop)"
# breaks: a job whose cleanup takes 5 s holds the stop for 5 s
# how: job "0:5:5" with budget 0.3: the service exits after ~5.3 s instead of ~0.6 s
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    import signal as _signal

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(_signal.SIGTERM, stopping.set)
    in_flight = set()
    try:
        stop_wait = asyncio.ensure_future(stopping.wait())
        try:
            while True:
                getter = asyncio.ensure_future(intake.get())
                await asyncio.wait({getter, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
                if stopping.is_set():
                    getter.cancel()
                    break
                task = asyncio.ensure_future(handle(getter.result()))
                in_flight.add(task)
                task.add_done_callback(in_flight.discard)
        finally:
            stop_wait.cancel()
        pending = set(in_flight)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=budget)
        if not pending:
            return 0
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return 143
    finally:
        loop.remove_signal_handler(_signal.SIGTERM)
