# mistake: reserves a slot at take time (virtual scheduling) and keeps it when the take is cancelled
# violates: waited longer than needed
# from: written by the helper who wrote the generators (issue 37)
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst = rate, burst
        self.clock, self.sleep = clock, sleep
        self.tat = clock()  # when the bucket would be full again

    async def take(self) -> None:
        now = self.clock()
        tat = max(self.tat, now)
        allowed_at = tat - (self.burst - 1) / self.rate
        self.tat = tat + 1 / self.rate
        if allowed_at - now > 1e-9:
            await self.sleep(allowed_at - now)
