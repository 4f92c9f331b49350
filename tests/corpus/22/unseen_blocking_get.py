# mistake: loops on `while not stopping.is_set(): job = await intake.get()`, checking the flag only when a job arrives
# violates: SIGTERM sent while the service was idle was not handled until something else woke the
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "a SIGTERM handled promptly even while the service is idle (nothing else wakes the loop)"; "the queue may also stay empty forever"
# breaks: with an empty queue the service sits in intake.get() forever after SIGTERM (until killed)
# how: one short job, then SIGTERM 0.3 s later: the service does not exit (killed by the lifetime guard, status 99)
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    import signal as _signal

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(_signal.SIGTERM, stopping.set)
    in_flight = set()
    try:
        while not stopping.is_set():
            job = await intake.get()
            if stopping.is_set():
                break
            task = asyncio.ensure_future(handle(job))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
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
