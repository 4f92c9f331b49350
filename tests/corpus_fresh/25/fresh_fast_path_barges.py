# mistake: takes a free token without queueing (only a take that must wait goes through the lock), so a take that arrives at the moment a token comes back grabs it ahead of one that was already waiting
# violates: takes return in the order they were called, even when one arrives at the moment a token comes back
# from: red team, session 4 (unseen tests)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.clock, self.sleep = rate, burst, clock, sleep
        self.tokens = float(burst)
        self.last = clock()
        self.waiting = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now

    async def take(self) -> None:
        self._refill()
        if self.tokens >= 1 - 1e-9:
            self.tokens -= 1
            return
        async with self.waiting:
            while True:
                self._refill()
                if self.tokens >= 1 - 1e-9:
                    self.tokens -= 1
                    return
                await self.sleep((1 - self.tokens) / self.rate)
