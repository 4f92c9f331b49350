# mistake: right deadlines and cleanup, but reads the results by iterating the `done` set that asyncio.wait returns (the chapter's loop)
# violates: where the contract says 'cancelled'
# the red team's words: "results: 'those of the first jobs to finish, in finishing order' (jobs finishing at the same moment come out in set/hash order, and the cut at `wanted` keeps an arbitrary one)"; from: red team of session 14, who saw the statement only
_EXPIRED = object()


async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""

    async def run(i):
        timeout = asyncio.timeout(job_timeout)
        try:
            async with timeout:
                return await start_work(i)
        except TimeoutError:
            if timeout.expired():
                return _EXPIRED
            raise

    results: list = []
    pending: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(run(next_job)))
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                result = task.result()
                if result is not _EXPIRED and len(results) < wanted:
                    results.append(result)
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
