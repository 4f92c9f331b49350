# mistake: written as a correct answer (an asyncio.Event set by the handler races intake.get() in asyncio.wait; drain with two bounded asyncio.wait calls) against a statement then silent on this path; the Graded list now settles it the other way
# violates: had not finished when it returned
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
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
        await asyncio.wait(pending, timeout=budget)
        return 143
    finally:
        loop.remove_signal_handler(_signal.SIGTERM)
