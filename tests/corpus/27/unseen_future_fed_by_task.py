# mistake: keeps a Future per key that a background runner Task resolves (value or exception) and removes in its finally; callers wait with asyncio.wait so they never cancel it (correct before the twist), but has no aclose, so nothing cancels the running calls
# violates: aclose must cancel every call of score still running
# from: the unseen red team (issue 37), who never saw the tests, sent in as a correct answer (wrong since 27.1 asks for aclose); first-run figures in tests/corpus_unseen/
class Coalescer:
    """Concurrent get(key) calls share one call of `score(key)`."""

    def __init__(self, score) -> None:
        self._score = score
        self._inflight: dict = {}
        self._runners: set = set()

    async def _run(self, key, fut):
        try:
            value = await self._score(key)
        except BaseException as exc:  # noqa: BLE001 - handed to every waiter
            if not fut.done():
                if isinstance(exc, asyncio.CancelledError):
                    fut.cancel()
                else:
                    fut.set_exception(exc)
        else:
            if not fut.done():
                fut.set_result(value)
        finally:
            if self._inflight.get(key) is fut:
                del self._inflight[key]

    async def get(self, key: str):
        fut = self._inflight.get(key)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self._inflight[key] = fut
            runner = asyncio.ensure_future(self._run(key, fut))
            self._runners.add(runner)
            runner.add_done_callback(self._runners.discard)
        await asyncio.wait({fut})
        return fut.result()
