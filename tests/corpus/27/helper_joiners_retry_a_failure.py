# mistake: only the caller that started the call sees its exception; the callers that joined it try again with a call of their own
# violates: a get(key) that arrives while a call of score(key) runs joins it
# from: written by the helper who wrote the generators (issue 37)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict[str, asyncio.Task] = {}

    async def get(self, key: str):
        shared = self.pending.get(key)
        joined = shared is not None
        if shared is None:
            shared = asyncio.create_task(self.score(key))
            self.pending[key] = shared

            def forget(task, key=key):
                if self.pending.get(key) is task:
                    del self.pending[key]
                if not task.cancelled():
                    task.exception()

            shared.add_done_callback(forget)
        try:
            return await asyncio.shield(shared)
        except Exception:
            if joined:
                return await self.get(key)  # it failed for the first caller; try once more for us
            raise
