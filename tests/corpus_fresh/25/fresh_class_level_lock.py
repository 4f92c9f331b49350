# mistake: creates the queueing lock as a class attribute, so all buckets share one lock and a take waiting on one bucket holds up every take on every other bucket, even a full one
# violates: `await bucket.take()` returns at once when a token is available and takes it
# from: red team, session 4 (unseen tests)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    turn = asyncio.Lock()

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.clock, self.sleep = rate, burst, clock, sleep
        self.tokens = float(burst)
        self.last = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now

    async def take(self) -> None:
        async with self.turn:
            self._refill()
            if self.tokens < 1:
                await self.sleep((1 - self.tokens) / self.rate)
                self._refill()
            self.tokens = max(0.0, self.tokens - 1)
