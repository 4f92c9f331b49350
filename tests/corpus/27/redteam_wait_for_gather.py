# mistake: bounds the wait with asyncio.wait_for(gather(...), timeout); on timeout wait_for cancels the gather and waits for it to finish
# violates: aclose must return within its timeout
# the red team's words: "waits, with a bound: never later than `timeout` seconds after it was called, even when a call of score ignores its cancellation"; from: red team of session 14, who saw the statement only
class Coalescer:
    """Coalescer(score): `await get(key)` shares one call of `score(key)`; `await aclose(timeout)` closes."""

    def __init__(self, score) -> None:
        self.score = score
        self.pending: dict = {}
        self.closed = False

    async def get(self, key):
        if self.closed:
            raise RuntimeError("Coalescer is closed")
        shared = self.pending.get(key)
        if shared is None:
            shared = asyncio.create_task(self.score(key))
            self.pending[key] = shared

            def forget(task, key=key):
                if self.pending.get(key) is task:
                    del self.pending[key]
                if not task.cancelled():
                    task.exception()

            shared.add_done_callback(forget)
        return await asyncio.shield(shared)

    async def aclose(self, timeout: float = 1.0) -> None:
        self.closed = True
        running = list(self.pending.values())
        for task in running:
            task.cancel()
        # wait for them, but no longer than timeout (TimeoutError is accepted)
        await asyncio.wait_for(asyncio.gather(*running, return_exceptions=True), timeout)
