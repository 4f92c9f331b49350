# mistake: when no token is available, sleeps for the missing time and then takes without checking again
# violates: takes returned between t=
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "over any stretch of time from a to b, at most burst + rate x (b - a) takes may return" with many tasks at once
# breaks: all tasks that waited at the same moment compute the same wait and all take at once
# how: burst 1, rate 10, 4 tasks at 0: three takes return at 0.1 (4 takes in [0, 0.1], allowed 2)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.clock, self.sleep = rate, burst, clock, sleep
        self.tokens = float(burst)
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self) -> None:
        self._refill()
        if self.tokens < 1:
            await self.sleep((1 - self.tokens) / self.rate)
            self._refill()
        self.tokens -= 1
