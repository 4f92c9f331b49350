# mistake: installs the SIGTERM handler and never removes it ("the process is exiting anyway")
# violates: the SIGTERM handler was still installed when run_service returned: remove it
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "install a SIGTERM handler with loop.add_signal_handler (and remove it before returning)"
# breaks: after run_service returns, the loop still routes SIGTERM to the stale handler (a later SIGTERM is swallowed instead of ending the process)
# how: in-process run: after run_service returns, loop._signal_handlers still has SIGTERM
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
        pass
