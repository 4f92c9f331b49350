# mistake: after sleeping for its token it sets the bucket to exactly empty at the wake-up time, so what came back while `sleep` woke late is lost
# violates: when sleep wakes late, what came back meanwhile counts for the takes after it (they return no later than needed)
# from: red team, session 6 (unseen tests)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.sleep = sleep
        self.tokens = float(burst)
        self.updated = clock()
        self.lock = asyncio.Lock()  # first come, first served

    async def take(self) -> None:
        async with self.lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
            self.updated = now
            if self.tokens >= 1:
                self.tokens -= 1
                return
            await self.sleep((1 - self.tokens) / self.rate)
            # exactly one token came back while we slept, and we take it
            self.tokens = 0.0
            self.updated = self.clock()
