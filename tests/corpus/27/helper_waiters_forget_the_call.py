# mistake: the waiters remove the entry once they have their result, so when every caller of a key was cancelled the finished call stays in the dict and later gets are served its old result
# violates: must not be remembered
# from: written by the helper who wrote the generators (issue 37)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict[str, asyncio.Task] = {}

    async def get(self, key: str):
        shared = self.pending.get(key)
        if shared is None:
            shared = asyncio.create_task(self.score(key))
            self.pending[key] = shared
        try:
            value = await asyncio.shield(shared)
        except asyncio.CancelledError:
            raise
        except Exception:
            if self.pending.get(key) is shared:
                del self.pending[key]
            raise
        if self.pending.get(key) is shared:
            del self.pending[key]
        return value
