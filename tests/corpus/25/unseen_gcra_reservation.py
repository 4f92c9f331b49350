# mistake: written as a correct answer (GCRA / virtual scheduling: each call reserves its admission time synchronously (so call order is service order), then sleeps until it) against a statement then silent on this path; the Graded list now settles it the other way
# violates: waited longer than needed: take
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
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
