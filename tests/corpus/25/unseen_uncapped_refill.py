# mistake: adds elapsed x rate to the tokens without capping at burst
# violates: after
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "tokens ... never pile up beyond burst"; "an idle bucket refills to burst, not beyond"
# breaks: after an idle second, far more than `burst` takes return at once
# how: burst 2, rate 10, idle 1 s, then 6 takes: all 6 return at once (allowed 2)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.clock, self.sleep = rate, clock, sleep
        self.tokens = float(burst)
        self.updated = clock()
        self.lock = asyncio.Lock()

    async def take(self) -> None:
        async with self.lock:
            while True:
                now = self.clock()
                self.tokens += (now - self.updated) * self.rate
                self.updated = now
                if self.tokens >= 1 - 1e-9:
                    self.tokens -= 1
                    return
                await self.sleep((1 - self.tokens) / self.rate)
