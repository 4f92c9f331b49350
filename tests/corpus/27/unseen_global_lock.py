# mistake: guards the whole get (lookup, call and await) with one asyncio.Lock "to avoid races"
# violates: three concurrent get
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "calls for different keys run concurrently" (and concurrent same-key callers must share one call)
# breaks: different keys are scored one after the other; a same-key caller waits for the lock and then starts its own call
# how: get("a") and get("b") with a 50 ms score: takes 100 ms; 3 concurrent get("a") make 3 score calls
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}
        self.lock = asyncio.Lock()

    async def get(self, key: str):
        async with self.lock:
            if key in self.pending:
                return await asyncio.shield(self.pending[key])
            task = asyncio.ensure_future(self.score(key))
            self.pending[key] = task
            try:
                return await asyncio.shield(task)
            finally:
                del self.pending[key]
