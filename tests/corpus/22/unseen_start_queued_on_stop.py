# mistake: on SIGTERM "finishes what was accepted": starts the jobs still waiting on the queue before draining
# violates: which arrived after SIGTERM, was started: stop taking jobs as soon as the signal arrives
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "once SIGTERM has arrived, start no new job, even if one is waiting on the queue"
# breaks: a job queued after (or at) the signal is started during the shutdown
# how: a long job running, a second job queued 0.3 s later, SIGTERM at ~0.1 s: "start 1" appears
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
        await asyncio.sleep(0.3)  # let the intake settle
        while not intake.empty():
            task = asyncio.ensure_future(handle(intake.get_nowait()))
            in_flight.add(task)
        pending = set(in_flight)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=budget)
        if not pending:
            return 0
        for task in pending:
            task.cancel()
        await asyncio.wait(pending, timeout=budget)
        return 143
    finally:
        loop.remove_signal_handler(_signal.SIGTERM)
