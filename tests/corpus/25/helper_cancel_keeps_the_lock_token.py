# mistake: takes the token before sleeping off the debt inside the lock, so a cancelled take has already taken it
# violates: waited longer than needed
# from: written by the helper who wrote the generators (issue 37)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst = rate, burst
        self.clock, self.sleep = clock, sleep
        self.tokens = float(burst)
        self.updated = clock()
        self.lock = asyncio.Lock()

    async def take(self) -> None:
        async with self.lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
            self.updated = now
            self.tokens -= 1
            if self.tokens < -1e-9:
                await self.sleep(-self.tokens / self.rate)
