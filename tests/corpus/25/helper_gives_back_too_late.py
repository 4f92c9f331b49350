# mistake: takes a token up front (going negative) and gives it back when cancelled, but the takes already waiting keep their longer waits
# violates: waited longer than needed
# from: written by the helper who wrote the generators (issue 37)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst = rate, burst
        self.clock, self.sleep = clock, sleep
        self.tokens = float(burst)
        self.updated = clock()

    async def take(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        self.tokens -= 1
        if self.tokens < -1e-9:
            try:
                await self.sleep(-self.tokens / self.rate)
            except asyncio.CancelledError:
                self.tokens += 1
                raise
