# mistake: when the bucket is empty, always sleeps a whole 1/rate
# violates: with half a token back at t=
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "otherwise it waits ... just long enough for one to come back"; "half a token back means half the wait"
# breaks: a take that needs only half a token waits a full interval
# how: burst 1, rate 10: take at 0, next take at 0.05 returns at 0.15 instead of 0.1
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.clock, self.sleep = rate, burst, clock, sleep
        self.tokens = float(burst)
        self.updated = clock()
        self.lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self) -> None:
        async with self.lock:
            self._refill()
            while self.tokens < 1 - 1e-9:
                await self.sleep(1 / self.rate)
                self._refill()
            self.tokens -= 1
