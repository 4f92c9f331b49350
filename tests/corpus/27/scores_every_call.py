# mistake: avoids the shared state altogether, so nothing is shared and every caller scores again
# violates: share one call
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score

    async def get(self, key: str):
        return await self.score(key)
