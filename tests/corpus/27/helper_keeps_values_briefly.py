# mistake: keeps a value for 50 ms after the call ended "to absorb bursts", so a get soon after the shared call ended is served the old value instead of scoring again
# violates: must not be remembered
# from: written by the helper who wrote the generators (issue 37)
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict[str, asyncio.Task] = {}
        self.recent: dict[str, tuple[float, object]] = {}

    async def get(self, key: str):
        if key in self.recent and time.monotonic() - self.recent[key][0] < 0.05:
            return self.recent[key][1]
        shared = self.pending.get(key)
        if shared is None:
            shared = asyncio.create_task(self.score(key))
            self.pending[key] = shared

            def forget(task, key=key):
                if self.pending.get(key) is task:
                    del self.pending[key]
                if not task.cancelled():
                    if task.exception() is None:
                        self.recent[key] = (time.monotonic(), task.result())

            shared.add_done_callback(forget)
        return await asyncio.shield(shared)
