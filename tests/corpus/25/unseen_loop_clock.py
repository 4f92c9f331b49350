# mistake: reads the time from the event loop (loop.time()) instead of the `clock` it was given
# violates: burst
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "read the time only with clock() and wait only with sleep"
# breaks: with a virtual clock, sleeps advance virtual time but the bucket sees (almost) no time pass, so it refills nothing and keeps waiting
# how: VirtualClock, burst 1, rate 10, 3 takes in turn: the third take is far later than 0.2 (or the drive times out)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst, self.sleep = rate, burst, sleep
        self.tokens = float(burst)
        self.updated = None
        self.lock = asyncio.Lock()

    def _refill(self) -> None:
        now = asyncio.get_running_loop().time()
        if self.updated is None:
            self.updated = now
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self) -> None:
        async with self.lock:
            self._refill()
            while self.tokens < 1 - 1e-9:
                await self.sleep((1 - self.tokens) / self.rate)
                self._refill()
            self.tokens -= 1
