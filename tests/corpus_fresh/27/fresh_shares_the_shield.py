# mistake: stores one asyncio.shield(...) future per key and lets every caller await that same outer future, so cancelling one caller cancels the shared outer future and every other caller gets CancelledError too
# violates: the other callers notice nothing
# from: red team, session 4 (unseen tests)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}

    async def get(self, key: str):
        shared = self.pending.get(key)
        if shared is None:
            inner = asyncio.ensure_future(self.score(key))
            shared = asyncio.shield(inner)
            self.pending[key] = shared

            def forget(_finished, key=key, shared=shared):
                if self.pending.get(key) is shared:
                    del self.pending[key]

            inner.add_done_callback(forget)
        return await shared
