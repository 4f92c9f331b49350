# correct: callers share a plain Future, resolved by a runner task that owns score(key) (also on cancellation: future.cancel()); callers await shield(future), aclose cancels the runners and waits with asyncio.timeout
# from: red team of session 14, who saw the statement only
class Coalescer:
    """Coalescer(score): `await get(key)` shares one call of `score(key)`; `await aclose(timeout)` closes."""

    def __init__(self, score) -> None:
        self.score = score
        self.calls: dict = {}      # key -> (runner task, future its callers wait on)
        self.closing = False

    async def _run(self, key, future) -> None:
        try:
            value = await self.score(key)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(value)
        finally:
            if self.calls.get(key, (None, None))[1] is future:
                del self.calls[key]
            if future.done() and not future.cancelled():
                future.exception()  # retrieved, even if every caller left

    async def get(self, key):
        if self.closing:
            raise RuntimeError("get() after aclose()")
        call = self.calls.get(key)
        if call is None:
            future = asyncio.get_running_loop().create_future()
            call = (asyncio.create_task(self._run(key, future)), future)
            self.calls[key] = call
        return await asyncio.shield(call[1])

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closing = True
        runners = [runner for runner, _ in self.calls.values()]
        for runner in runners:
            runner.cancel()
        if not runners:
            return
        try:
            async with asyncio.timeout(timeout):
                await asyncio.wait(runners)
        except TimeoutError:
            pass  # a score ignored its cancellation: stop waiting for it
