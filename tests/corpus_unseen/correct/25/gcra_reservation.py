# correct: GCRA / virtual scheduling: each call reserves its admission time synchronously (so call order is service order), then sleeps until it
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        self._interval = 1.0 / rate
        self._burst = burst
        self._clock, self._sleep = clock, sleep
        self._tat = clock()  # theoretical arrival time: tat <= now means the bucket is full

    async def take(self) -> None:
        now = self._clock()
        self._tat = max(self._tat, now) + self._interval
        admit_at = self._tat - self._burst * self._interval
        wait = admit_at - now
        if wait > 1e-12:
            await self._sleep(wait)
