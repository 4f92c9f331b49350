# mistake: "survives cancellation" read as "the caller keeps waiting": it catches its own CancelledError and awaits the shared call again
# violates: every caller must get the shared call's value or exception
# the red team's words: "cancellation: a cancelled caller gets CancelledError at once"; from: red team of session 14, who saw the statement only
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
        while True:
            try:
                return await asyncio.shield(shared)
            except asyncio.CancelledError:
                if shared.cancelled():  # the call itself was cancelled (aclose): give up
                    raise
                # only this caller was cancelled; the call still runs, so keep waiting for it

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        running = list(self.pending.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
