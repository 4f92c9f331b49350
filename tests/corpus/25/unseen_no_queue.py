# mistake: every waiter sleeps for its own missing fraction and re-checks, with no queue between waiters
# violates: B called take
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "takes are served in the order they were called: one that arrives while another waits queues behind it, even at the moment a token comes back"
# breaks: a newcomer that calls take() exactly when a token comes back gets it before the task that has been waiting
# how: burst 1, rate 10: A takes at 0, B calls at 0.05 and waits; C calls at 0.1: C is admitted at 0.1 and B only at 0.2
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
        while self.tokens < 1 - 1e-9:
            await self.sleep((1 - self.tokens) / self.rate)
            self._refill()
        self.tokens -= 1
