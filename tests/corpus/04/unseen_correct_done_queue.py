# correct: each task reports itself on an asyncio.Queue via a done callback; refill one slot per finished task; the deadline per job is a loop.call_later timer per task that cancels it (its timers are cancelled before the final cleanup)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the job_timeout (the exercise's twist, session 14) added by the ex04 helper, the rest as sent
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    finished: asyncio.Queue = asyncio.Queue()
    running = set()
    expired = set()
    timers = []
    counter = 0

    def expire(task):
        if not task.done():
            expired.add(task)
            task.cancel()

    def launch():
        nonlocal counter
        task = asyncio.ensure_future(start_work(counter))
        counter += 1
        running.add(task)
        task.add_done_callback(finished.put_nowait)
        if job_timeout is not None:
            timers.append(asyncio.get_running_loop().call_later(job_timeout, expire, task))

    results = []
    try:
        for _ in range(limit):
            launch()
        while len(results) < wanted:
            task = await finished.get()
            running.discard(task)
            if task not in expired:
                results.append(task.result())
            if len(results) < wanted:
                launch()
        return results
    finally:
        for timer in timers:
            timer.cancel()
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
