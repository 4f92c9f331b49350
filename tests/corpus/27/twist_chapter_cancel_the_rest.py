# mistake: aclose copies the page's cancel_the_rest: cancels every other task on the loop, then gathers them
# violates: aclose must cancel this Coalescer's calls only
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
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.wait_for(asyncio.gather(*rest, return_exceptions=True), timeout)
