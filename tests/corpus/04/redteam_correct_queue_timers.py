# correct: no asyncio.wait: each job's done-callback feeds a Queue (so ties come out in true finishing order) and each deadline is a loop.call_later timer that cancels the job; a job cancelled by its deadline leaves its slot only when its task is done
# from: red team of session 14, who saw the statement only
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Queue = asyncio.Queue()  # tasks, in the order they finished
    running: set[asyncio.Task] = set()
    expired: set[asyncio.Task] = set()
    timers: dict[asyncio.Task, asyncio.TimerHandle] = {}
    results: list = []
    next_job = 0

    def expire(task: asyncio.Task) -> None:
        if not task.done():
            expired.add(task)
            task.cancel()

    try:
        while len(results) < wanted:
            while len(running) < limit:
                task = asyncio.create_task(start_work(next_job))
                next_job += 1
                running.add(task)
                task.add_done_callback(finished.put_nowait)
                if job_timeout is not None:
                    timers[task] = loop.call_later(job_timeout, expire, task)
            task = await finished.get()
            running.discard(task)
            timer = timers.pop(task, None)
            if timer is not None:
                timer.cancel()
            if task in expired and (task.cancelled() or task.exception() is None):
                continue  # its deadline passed: no result, and its cleanup is over
            results.append(task.result())  # raises the job's own error
        return results
    finally:
        for timer in timers.values():
            timer.cancel()
        for task in running:
            task.cancel()
        # gather keeps waiting for the jobs' cleanup even if we are cancelled again
        await asyncio.gather(*running, return_exceptions=True)
