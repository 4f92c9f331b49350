# correct: no shield: callers wait with asyncio.wait({task}) (cancelling a caller cancels only its wait) and read task.result(); tasks kept in a set, aclose bounded by a deadline loop
# from: red team of session 14, who saw the statement only
class Coalescer:
    """Coalescer(score): `await get(key)` shares one call of `score(key)`; `await aclose(timeout)` closes."""

    def __init__(self, score) -> None:
        self.score = score
        self.running: dict = {}
        self.closed = False

    def _ended(self, key, task) -> None:
        if self.running.get(key) is task:
            del self.running[key]
        if not task.cancelled():
            task.exception()

    async def get(self, key):
        if self.closed:
            raise RuntimeError("this Coalescer is closed")
        task = self.running.get(key)
        if task is None:
            task = asyncio.ensure_future(self.score(key))
            self.running[key] = task
            task.add_done_callback(lambda t, key=key: self._ended(key, t))
        await asyncio.wait({task})
        return task.result()

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        tasks = set(self.running.values())
        for task in tasks:
            task.cancel()
        deadline = asyncio.get_running_loop().time() + timeout
        while tasks:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise TimeoutError(f"{len(tasks)} call(s) of score ignored cancellation")
            _, tasks = await asyncio.wait(tasks, timeout=left)
