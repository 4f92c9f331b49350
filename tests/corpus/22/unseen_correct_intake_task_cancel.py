# correct: the intake loop runs as its own task; the SIGTERM handler cancels it directly; drain uses asyncio.timeout around shielded gathers
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
import asyncio


async def run_service(intake: asyncio.Queue, handle, budget: float) -> int:
    """Run `handle(job)` for each job until SIGTERM; then drain within `budget`; return 0 or 143."""
    import signal as _signal

    loop = asyncio.get_running_loop()
    jobs: list[asyncio.Task] = []

    async def accept():
        while True:
            job = await intake.get()
            jobs.append(asyncio.create_task(handle(job)))

    acceptor = asyncio.create_task(accept())
    loop.add_signal_handler(_signal.SIGTERM, acceptor.cancel)
    try:
        try:
            await acceptor
        except asyncio.CancelledError:
            if not acceptor.cancelled():
                raise  # we ourselves were cancelled
        live = [t for t in jobs if not t.done()]
        try:
            async with asyncio.timeout(budget):
                await asyncio.shield(asyncio.gather(*live, return_exceptions=True))
        except TimeoutError:
            pass
        late = [t for t in live if not t.done()]
        if not late:
            return 0
        for t in late:
            t.cancel()
        try:
            async with asyncio.timeout(budget):
                await asyncio.shield(asyncio.gather(*late, return_exceptions=True))
        except TimeoutError:
            pass
        return 143
    finally:
        loop.remove_signal_handler(_signal.SIGTERM)
        acceptor.cancel()
