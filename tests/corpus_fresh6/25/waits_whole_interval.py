# mistake: when no token is there it always sleeps a whole 1/rate, ignoring the fraction of a token that has already come back
# violates: every take returns the moment its token is back (half a token back means half the wait), not later
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

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self) -> None:
        async with self.lock:
            self._refill()
            while self.tokens < 1 - 1e-9:
                await self.sleep(1 / self.rate)  # one token's worth of time
                self._refill()
            self.tokens -= 1
