# mistake: runs score in a shared task but every caller awaits the task itself, so one cancelled caller cancels it
# violates: cancelling one waiter must not cancel the shared call
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        task = self.pending.get(key)
        if task is None:
            task = asyncio.create_task(self.score(key))
            self.pending[key] = task
            task.add_done_callback(lambda t: self.pending.pop(key, None))
        return await task
