# mistake: runs score as a shared Task (good) but every caller awaits the task directly
# violates: the other callers got
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "cancelling any one caller (the first or a later one) must not affect the others"
# breaks: cancelling any caller cancels the shared task for everyone
# how: 3 callers, cancel the second at 5 ms: the other two get CancelledError
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending = {}

    async def get(self, key: str):
        if key not in self.pending:
            task = asyncio.ensure_future(self.score(key))
            self.pending[key] = task
            task.add_done_callback(lambda t, key=key: self.pending.pop(key, None))
        return await self.pending[key]
