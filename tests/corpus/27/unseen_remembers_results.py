# mistake: never removes finished calls ("a cache is a coalescer too")
# violates: after the shared call ended, a new get must score again
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "once the shared call has ended, the next get(key) calls score(key) again (nothing is remembered, failures included)"
# breaks: later gets return the stale value (or re-raise an old failure) without calling score
# how: get("a"), then get("a") after it finished: score called once instead of twice
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        if key not in self.pending:
            self.pending[key] = asyncio.ensure_future(self.score(key))
        return await asyncio.shield(self.pending[key])
