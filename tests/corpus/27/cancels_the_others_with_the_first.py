# mistake: catches the cancellation but passes it on to every waiter by cancelling the shared future
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
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            raise
        finally:
            del self.pending[key]
        future.set_result(value)
        return value
