# mistake: shields the shared task, but the caller that created it removes the entry in its own finally
# violates: score
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "a get(key) that arrives after the cancellation, while the call still runs, joins that call instead of starting a second one"
# breaks: once the first caller is cancelled, the entry is gone while score still runs; the next get starts a second call
# how: cancel the first caller at 5 ms, new get at 10 ms: score called twice
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        if key in self.pending:
            return await asyncio.shield(self.pending[key])
        task = asyncio.ensure_future(self.score(key))
        self.pending[key] = task
        try:
            return await asyncio.shield(task)
        finally:
            self.pending.pop(key, None)
