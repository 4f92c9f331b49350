# mistake: counts the callers of each shared call and cancels the call of score when its last caller is cancelled ("nobody wants the value"), so a call whose callers were all cancelled does not run to its end and a later get cannot join it
# violates: the shared call runs to its end even when all its callers have been cancelled
# from: red team, session 4 (unseen tests)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}
        self.waiting: dict = {}

    def _forget(self, key, task) -> None:
        if self.pending.get(key) is task:
            del self.pending[key]

    async def get(self, key: str):
        task = self.pending.get(key)
        if task is None:
            task = asyncio.create_task(self.score(key))
            self.pending[key] = task
            task.add_done_callback(lambda finished: self._forget(key, finished))
        self.waiting[task] = self.waiting.get(task, 0) + 1
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if self.waiting[task] == 1 and not task.done():
                task.cancel()
            raise
        finally:
            self.waiting[task] -= 1
            if not self.waiting[task]:
                del self.waiting[task]
