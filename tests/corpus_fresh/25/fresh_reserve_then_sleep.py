# mistake: reserves a token at once (the count goes negative) and sleeps for its own precomputed share; a cancelled take gives its token back, but the takes behind it keep sleeping to their old times instead of moving up
# violates: the takes behind it move up
# from: red team, session 4 (unseen tests)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.clock, self.sleep = rate, burst, clock, sleep
        self.tokens = float(burst)
        self.last = clock()

    async def take(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        self.tokens -= 1
        if self.tokens >= 0:
            return
        try:
            await self.sleep(-self.tokens / self.rate)
        except asyncio.CancelledError:
            self.tokens += 1
            raise
