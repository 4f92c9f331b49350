# mistake: keeps the original shape: the first caller owns the shared future and except Exception misses cancellation
# violates: when the first caller is cancelled, the others must still get the value
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        if key in self.pending:
            return await self.pending[key]
        future = asyncio.get_running_loop().create_future()
        self.pending[key] = future
        try:
            value = await self.score(key)
        except Exception as exc:
            future.set_exception(exc)
            raise
        finally:
            del self.pending[key]
        future.set_result(value)
        return value
