# mistake: after sleeping for the missing part of a token it sets the count to exactly one token ("the one I waited for"), throwing away whatever came back while the sleep overslept, so with a real sleep that wakes late every later take falls further behind
# violates: a sleep wakes late
# from: red team, session 4 (unseen tests)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.clock, self.sleep = rate, burst, clock, sleep
        self.tokens = float(burst)
        self.last = clock()
        self.turn = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now

    async def take(self) -> None:
        async with self.turn:
            self._refill()
            if self.tokens < 1:
                await self.sleep((1 - self.tokens) / self.rate)
                self.tokens = 1.0  # the token we waited for has come back
                self.last = self.clock()
            self.tokens -= 1
