# mistake: on SIGTERM sleeps the whole budget, then looks at which jobs are still running
# violates: SIGTERM sent while the service was idle was not handled until something else woke the || outlasted its budget
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "give the jobs in flight up to budget seconds to finish, returning early if they all do"; "a return ... as soon as the work is done"
# breaks: the stop always takes `budget` seconds, even when the last job ends at once
# how: one 0.1 s job, budget 2, SIGTERM right after it starts: the service exits after 2 s
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
        await asyncio.sleep(budget)
        pending = {t for t in in_flight if not t.done()}
        if not pending:
            return 0
        for task in pending:
            task.cancel()
        await asyncio.wait(pending, timeout=budget)
        return 143
    finally:
        loop.remove_signal_handler(_signal.SIGTERM)
