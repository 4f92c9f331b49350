# mistake: refills int(elapsed*rate) whole tokens and moves `last` to now, dropping the partial token each time (red team, issue 28)
# violates: waits longer than needed
# breaks: tokens come back continuously at `rate` (fractions of a token are thrown away)
# how: refills int(elapsed*rate) whole tokens and moves `last` to now, dropping the partial token each time
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.clock, self.sleep = rate, burst, clock, sleep
        self.tokens = burst
        self.last = clock()
        self.lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + int((now - self.last) * self.rate + 1e-9))
        self.last = now

    async def take(self) -> None:
        async with self.lock:
            self._refill()
            while self.tokens < 1:
                await self.sleep(1 / self.rate)
                self._refill()
            self.tokens -= 1
