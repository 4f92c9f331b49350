# mistake: reserves a time slot for each take up front (next_free += 1/rate), so a take cancelled while it waits keeps its slot
# violates: a cancelled take takes no token and the takes behind it move up
# from: red team, session 6 (unseen tests)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.sleep = sleep
        self.interval = 1 / rate
        # the time at which the bucket would be full again if nobody took anything
        self.full_at = clock()

    async def take(self) -> None:
        now = self.clock()
        # a full bucket lets `burst` takes through: one slot each, `interval` apart
        self.full_at = max(self.full_at, now) + self.interval
        wait = self.full_at - now - self.burst * self.interval
        if wait > 0:
            await self.sleep(wait)
