# mistake: forgets a finished call in a done callback with pending.pop(key) without checking the entry is still that call, and starts a new call when it finds a finished one; a get arriving just as a call ends registers a new call that the old callback then forgets, so the next get starts a second call for the key while the first still runs
# violates: while its call from
# from: red team, session 4 (unseen tests)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}

    async def get(self, key: str):
        task = self.pending.get(key)
        if task is None or task.done():
            task = asyncio.create_task(self.score(key))
            self.pending[key] = task
            task.add_done_callback(lambda _finished: self.pending.pop(key, None))
        return await asyncio.shield(task)
