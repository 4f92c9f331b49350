# mistake: aclose hands the dict's values straight to asyncio.wait, which raises ValueError when no call is running
# violates: aclose with nothing running must return at once
# the red team's words: "cancels every call: with nothing running it returns at once"; from: red team of session 14, who saw the statement only
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
        return await asyncio.shield(shared)

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        for task in self.pending.values():
            task.cancel()
        await asyncio.wait(self.pending.values(), timeout=timeout)
