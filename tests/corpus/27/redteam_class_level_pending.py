# mistake: declares `pending` (and `closed`) as class attributes, so every Coalescer shares one dict of running calls
# violates: each Coalescer shares calls among its own gets only
# the red team's words: "sharing: a Coalescer shares calls among its own gets only; aclose cancels nothing else (not another Coalescer's calls)"; from: red team of session 14, who saw the statement only
class Coalescer:
    """Coalescer(score): `await get(key)` shares one call of `score(key)`; `await aclose(timeout)` closes."""

    pending: dict = {}  # key -> the task running score(key)

    def __init__(self, score) -> None:
        self.score = score
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
        running = list(self.pending.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
