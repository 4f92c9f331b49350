# mistake: counts the waiters and cancels the shared call when the last one is cancelled, so a get that arrives later starts a second call
# violates: share one call
# from: written by the helper who wrote the generators (issue 37)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict[str, asyncio.Task] = {}
        self.waiters: dict[str, int] = {}

    async def get(self, key: str):
        shared = self.pending.get(key)
        if shared is None:
            shared = asyncio.create_task(self.score(key))
            self.pending[key] = shared
            self.waiters[key] = 0

            def forget(task, key=key):
                if self.pending.get(key) is task:
                    del self.pending[key]
                if not task.cancelled():
                    task.exception()

            shared.add_done_callback(forget)
        self.waiters[key] += 1
        try:
            return await asyncio.shield(shared)
        except asyncio.CancelledError:
            if self.waiters[key] == 1 and not shared.done():
                shared.cancel()  # nobody wants it any more
                self.pending.pop(key, None)
            raise
        finally:
            self.waiters[key] -= 1
