# mistake: aclose cancels and waits first, and marks the Coalescer closed only once the wait is over
# violates: a get after aclose must raise RuntimeError at once
# the red team's words: "closed: from the moment aclose is called (also while it waits), get raises RuntimeError at once and calls no score"; from: red team of session 14, who saw the statement only
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
        running = list(self.pending.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
        self.closed = True  # everything has stopped: now refuse new work
