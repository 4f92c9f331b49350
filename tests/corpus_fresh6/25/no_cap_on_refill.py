# mistake: adds back rate × elapsed tokens without capping them at `burst`, so a long idle stretch lets a big burst through
# violates: tokens never pile up beyond `burst`: over any stretch at most burst + rate × (b - a) takes return
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
        self.tokens += (now - self.updated) * self.rate
        self.updated = now

    async def take(self) -> None:
        async with self.lock:
            self._refill()
            while self.tokens < 1 - 1e-9:
                await self.sleep((1 - self.tokens) / self.rate)
                self._refill()
            self.tokens -= 1
