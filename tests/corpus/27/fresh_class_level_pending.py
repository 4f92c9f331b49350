# mistake: declares the table of calls in flight as a class attribute (`pending: dict = {}`), so every Coalescer shares one table and a get(key) on one coalescer joins another coalescer's call, of another score function, for the same key
# violates: shares calls among its own gets only
# from: red team, session 4 (unseen tests)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    pending: dict = {}

    def __init__(self, score) -> None:
        self.score = score

    def _forget(self, key, task) -> None:
        if self.pending.get(key) is task:
            del self.pending[key]

    async def get(self, key: str):
        task = self.pending.get(key)
        if task is None:
            task = asyncio.create_task(self.score(key))
            self.pending[key] = task
            task.add_done_callback(lambda finished: self._forget(key, finished))
        return await asyncio.shield(task)
