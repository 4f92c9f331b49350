# mistake: runs score(key) in a task of its own but awaits that task directly, without asyncio.shield
# violates: when the first caller is cancelled, the oth
# the red team's words: "cancellation: the shared call runs to its end even when a caller is cancelled, and the other callers notice nothing"; from: red team of session 14, who saw the statement only
class Coalescer:
    """Coalescer(score): `await get(key)` shares one call of `score(key)`; `await aclose(timeout)` closes."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}
        self.closed = False

    async def get(self, key):
        if self.closed:
            raise RuntimeError("Coalescer is closed")
        task = self.pending.get(key)
        if task is None:
            task = asyncio.create_task(self.score(key))  # its own task: no caller owns it
            self.pending[key] = task
            task.add_done_callback(lambda t, key=key: self.pending.pop(key, None) if self.pending.get(key) is t else None)
        return await task

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        running = list(self.pending.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
