# mistake: shields a shared task, but each caller removes the key from `pending` in its own finally, as the chapter's starting code did
# violates: was called 2 times
# the red team's words: "sharing: a get(key) that arrives while a call of score(key) runs joins that call, whichever of its callers have been cancelled"; from: red team of session 14, who saw the statement only
class Coalescer:
    """Coalescer(score): `await get(key)` shares one call of `score(key)`; `await aclose(timeout)` closes."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}
        self.closed = False

    async def get(self, key):
        if self.closed:
            raise RuntimeError("Coalescer is closed")
        if key not in self.pending:
            self.pending[key] = asyncio.create_task(self.score(key))
        shared = self.pending[key]
        try:
            return await asyncio.shield(shared)
        finally:
            # the call is over for us: forget it so the next get scores again
            self.pending.pop(key, None)

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        running = [task for task in self.pending.values() if not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
