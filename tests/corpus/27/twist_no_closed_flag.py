# mistake: cancels and waits (bounded), but keeps no closed state: a get after aclose starts a new call of score
# violates: a get after aclose must raise RuntimeError
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict[str, asyncio.Task] = {}

    async def get(self, key: str):
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
        running = list(self.pending.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
