# mistake: the caller forgets the key only after a value came back (a plain line after the await, no finally)
# violates: after the shared call ended, a new get must score again
# the red team's words: "nothing remembered: once the shared call has ended, the next get(key) calls score(key) again, after a value as after an exception"; from: red team of session 14, who saw the statement only
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
        value = await asyncio.shield(shared)
        if self.pending.get(key) is shared:
            del self.pending[key]  # done: the next get scores again
        return value

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        running = [task for task in self.pending.values() if not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
