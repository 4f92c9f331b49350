# mistake: the shared call runs as its own Task; callers await it through shield; a done callback removes the entry (correct before the twist), but has no aclose, so nothing cancels the running calls
# violates: aclose must cancel every call of score still running
# from: the unseen red team (issue 37), who never saw the tests, sent in as a correct answer (wrong since 27.1 asks for aclose); first-run figures in tests/corpus_unseen/
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}

    async def get(self, key: str):
        task = self.pending.get(key)
        if task is None:
            task = asyncio.ensure_future(self.score(key))
            self.pending[key] = task

            def drop(done, key=key):
                if self.pending.get(key) is done:
                    del self.pending[key]

            task.add_done_callback(drop)
        return await asyncio.shield(task)
