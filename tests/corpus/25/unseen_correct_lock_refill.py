# correct: continuous refill computed from clock(); an asyncio.Lock (FIFO, no barging) serialises takers so the head of the queue waits for its token
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst = float(rate), burst
        self.clock, self.sleep = clock, sleep
        self.tokens = float(burst)
        self.updated = clock()
        self._turn = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self) -> None:
        async with self._turn:
            self._refill()
            while self.tokens < 1:
                await self.sleep((1 - self.tokens) / self.rate)
                self._refill()
                if self.tokens > 1 - 1e-9:
                    self.tokens = max(self.tokens, 1.0)
            self.tokens -= 1
