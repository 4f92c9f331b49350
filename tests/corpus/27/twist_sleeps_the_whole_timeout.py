# mistake: cancels, then sleeps the whole timeout to give the calls time to end
# violates: aclose with nothing running must return at once || aclose must return as soon as
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict[str, asyncio.Task] = {}
        self.closed = False

    async def get(self, key: str):
        if self.closed:
            raise RuntimeError("closed")
        task = self.pending.get(key)
        if task is None:
            task = asyncio.create_task(self.score(key))
            self.pending[key] = task

            def forget(done: asyncio.Task, key: str = key) -> None:
                if self.pending.get(key) is done:
                    del self.pending[key]
                if not done.cancelled():
                    done.exception()

            task.add_done_callback(forget)
        return await asyncio.shield(task)

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        for task in self.pending.values():
            task.cancel()
        await asyncio.sleep(timeout)
