# mistake: keeps every shared task in the dict for good, so a failure (or a value) is served forever
# violates: a failed score must not be remembered
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        if key not in self.pending:
            self.pending[key] = asyncio.create_task(self.score(key))
        return await asyncio.shield(self.pending[key])
