# mistake: each job runs inside its own `async with asyncio.timeout(job_timeout)` in a wrapper that turns every TimeoutError into "no result" without asking expired(), so a job's own TimeoutError is taken for its deadline and swallowed, and first_results carries on where it must raise that error (the rest is right: the wrapper task holds the slot until the job is gone, and before the final cancel every job's timeout is disarmed with reschedule(None), so it cannot cut a cleanup short); labelled correct until session 29, when no generated job raised a TimeoutError of its own
# violates: a job's own TimeoutError was swallowed as if its deadline had passed
# how: limit 1, wanted 1, job_timeout 2.0625 s; job 0 raises JobTimedOut (a TimeoutError subclass) after 1.25 s: the wrapper returns "no result" and the call starts job 1 instead of raising
# breaks: errors: when a job raises before `wanted` results are in, first_results raises that error itself
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    no_result = object()
    timeouts: dict[int, asyncio.Timeout] = {}

    async def bounded(i: int):
        try:
            async with asyncio.timeout(job_timeout) as timeouts[i]:
                return await start_work(i)
        except TimeoutError:
            return no_result
        finally:
            timeouts.pop(i, None)  # only the jobs still running keep theirs

    results: list = []
    running: set[asyncio.Task] = set()
    i = 0
    try:
        while len(results) < wanted:
            while len(running) < limit:
                running.add(asyncio.create_task(bounded(i)))
                i += 1
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                value = task.result()
                if value is not no_result and len(results) < wanted:
                    results.append(value)
        return results
    finally:
        for timeout in timeouts.values():
            if not timeout.expired():
                timeout.reschedule(None)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
