# mistake: shields the shared task for the caller that started it, but later callers await the task itself
# violates: cancelling one waiter must not cancel the shared call
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        task = self.pending.get(key)
        if task is not None:
            return await task
        task = asyncio.create_task(self.score(key))
        self.pending[key] = task
        task.add_done_callback(lambda t: self.pending.pop(key, None))
        return await asyncio.shield(task)
