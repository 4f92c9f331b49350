# mistake: each job runs inside its own `async with asyncio.timeout(job_timeout)` (chapter 05) in a wrapper that turns every TimeoutError into "no result" (a job's own TimeoutError too: it never asks expired()), and the timeout stays armed after the final cancel: when it expires during a cancelled job's cleanup it cancels the job again and cuts the cleanup short, so first_results ends before the jobs have cleaned up
# violates: ended before the jobs it cancelled had finished their cleanup || a job's own TimeoutError was swallowed as if its deadline had passed
# how: the last result comes at 2 s; a job started at 1 s is cancelled then and needs 1 s to clean up, but its job_timeout (1.03 s) cuts that at 2.03 s, so first_results ends at 2.03 s, not 3 s
# breaks: when it ends: the last result plus the time the cancelled jobs take to clean up, not earlier
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    no_result = object()

    async def bounded(i: int):
        try:
            async with asyncio.timeout(job_timeout):
                return await start_work(i)
        except TimeoutError:
            return no_result

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
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
