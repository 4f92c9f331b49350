# mistake: keeps the original shape (first caller runs score itself) and only fixes the missing promise on cancellation by cancelling the future
# violates: the other callers got
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "cancelling any one caller (the first or a later one) must not affect the others: they still get the value"
# breaks: cancelling the first caller cancels score() and every joiner gets CancelledError
# how: 3 callers, cancel the first at 5 ms: the other two end with CancelledError instead of the value
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        if key in self.pending:
            return await asyncio.shield(self.pending[key])
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
