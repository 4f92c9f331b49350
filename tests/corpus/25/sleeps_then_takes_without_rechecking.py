# mistake: no lock and no re-check: every waiter sleeps for the same missing token, then all take it
# violates: over-admitted
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst = rate, burst
        self.clock, self.sleep = clock, sleep
        self.tokens = float(burst)
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self) -> None:
        self._refill()
        if self.tokens < 1:
            await self.sleep((1 - self.tokens) / self.rate)
            self._refill()
        self.tokens -= 1
