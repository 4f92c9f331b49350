# mistake: no queue: every waiting take sleeps and re-checks on its own, so a take that arrives when a token comes back can grab it ahead of one that has waited
# violates: first come, first served: takes return in the order they were called, even when one arrives at the moment a token comes back
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

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self) -> None:
        while True:
            self._refill()
            if self.tokens >= 1 - 1e-9:  # no await between the check and the take: no lock needed
                self.tokens -= 1
                return
            await self.sleep((1 - self.tokens) / self.rate)
