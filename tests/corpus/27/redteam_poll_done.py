# mistake: callers poll the shared task every 20 ms (hazard 3's shape) instead of awaiting it
# violates: every caller must get the shared call's value or exception
# the red team's words: "results: every caller still waiting when the shared call ends gets its value, or its exception, at that moment"; from: red team of session 14, who saw the statement only
class Coalescer:
    """Coalescer(score): `await get(key)` shares one call of `score(key)`; `await aclose(timeout)` closes."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}
        self.closed = False

    async def get(self, key):
        if self.closed:
            raise RuntimeError("Coalescer is closed")
        shared = self.pending.get(key)
        if shared is None:
            shared = asyncio.create_task(self.score(key))
            self.pending[key] = shared

            def forget(task, key=key):
                if self.pending.get(key) is task:
                    del self.pending[key]
                if not task.cancelled():
                    task.exception()

            shared.add_done_callback(forget)
        while not shared.done():  # cancelling us interrupts the sleep, never the shared task
            await asyncio.sleep(0.02)
        return shared.result()  # its value, its exception, or CancelledError

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        running = list(self.pending.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
