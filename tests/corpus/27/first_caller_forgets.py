# mistake: the first caller removes the entry in its own finally, so its cancellation un-shares the running call
# violates: started a second call while the first still ran
# breaks: a caller cancelled while the call runs leaves it shared: a get(key) arriving later still joins the same call
# how: the first caller removes the entry in its own finally, so when it is cancelled the next caller starts a second score(key) while the first is still running
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict[str, asyncio.Task] = {}

    async def get(self, key: str):
        if key in self.pending:
            return await asyncio.shield(self.pending[key])
        task = asyncio.ensure_future(self.score(key))
        self.pending[key] = task
        try:
            return await asyncio.shield(task)
        finally:
            if self.pending.get(key) is task:
                del self.pending[key]
