# mistake: never moves the refill timestamp, so every refill adds all the time since the bucket was made
# violates: over-admitted
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
                elapsed = self.clock() - self.updated
                self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
                if self.tokens >= 1 - 1e-9:
                    self.tokens -= 1
                    return
                await self.sleep((1 - self.tokens) / self.rate)
