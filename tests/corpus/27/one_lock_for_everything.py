# mistake: shares one task per key, but runs every score under one lock "to be safe", so different keys wait for each other
# violates: different keys must be scored concurrently
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.lock = asyncio.Lock()
        self.pending = {}

    async def _score_alone(self, key: str):
        async with self.lock:
            return await self.score(key)

    async def get(self, key: str):
        task = self.pending.get(key)
        if task is None:
            task = asyncio.create_task(self._score_alone(key))
            self.pending[key] = task
            task.add_done_callback(lambda t: self.pending.pop(key, None))
        return await asyncio.shield(task)
