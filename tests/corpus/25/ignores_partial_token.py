# mistake: when no whole token is there, sleeps a full 1/rate, ignoring the fraction of a token that has already come back, so takes after a pause come late
# violates: waits longer than needed
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
            while True:
                now = self.clock()
                self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1 - 1e-9:
                    self.tokens -= 1
                    return
                await self.sleep(1 / self.rate)
