# mistake: paces every take by 1/rate, so even a full bucket makes the first takes wait
# violates: the first burst takes must not wait
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self.rate, self.burst = rate, burst
        self.clock, self.sleep = clock, sleep
        self.lock = asyncio.Lock()

    async def take(self) -> None:
        async with self.lock:
            await self.sleep(1 / self.rate)
