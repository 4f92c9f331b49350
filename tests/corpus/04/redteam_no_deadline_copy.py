# mistake: copied the chapter's solution and added the job_timeout parameter to the signature, but never uses it
# violates: is still running at its deadline
# the red team's words: "deadline per job: 'a job still running job_timeout seconds after its own start is cancelled while the others run on; it gives no result'"; from: red team of session 14, who saw the statement only
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    results: list = []
    pending: set[asyncio.Task] = set()
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                pending.add(asyncio.create_task(start_work(next_job)))
                next_job += 1
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
