# mistake: per-job deadline with asyncio.wait_for(start_work(i), job_timeout) inside a wrapper task, the deadline still armed after the final cancel; on 3.11 wait_for runs the job in an inner task and a job is left running when first_results ends; on 3.12+ (wait_for is asyncio.timeout there) the deadline, coming during a cancelled job's cleanup, can cut it short (until session 27 it was rejected there for returning its results where a caller cancelled during cleanup must end cancelled, a case Exercise 4.1 no longer asks for)
# violates: left running when first_results ended || ended before the jobs it cancelled had finished their cleanup
# the red team's words: "cancellation: 'it ends cancelled once the jobs in flight are cleaned up, even if a second cancel arrives while it waits for them'; 'no job is left running' (Python 3.11 only)"; from: red team of session 14, who saw the statement only
_EXPIRED = object()


async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""

    async def run(i):
        try:
            return await asyncio.wait_for(start_work(i), job_timeout)
        except TimeoutError as exc:
            if isinstance(exc.__cause__, asyncio.CancelledError):
                return _EXPIRED  # raised by wait_for at the deadline
            raise  # the job's own TimeoutError

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
