# correct: each task reports itself on an asyncio.Queue via a done callback; refill one slot per finished task
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    finished: asyncio.Queue = asyncio.Queue()
    running = set()
    counter = 0

    def launch():
        nonlocal counter
        task = asyncio.ensure_future(start_work(counter))
        counter += 1
        running.add(task)
        task.add_done_callback(finished.put_nowait)

    results = []
    try:
        for _ in range(limit):
            launch()
        while len(results) < wanted:
            task = await finished.get()
            running.discard(task)
            results.append(task.result())
            if len(results) < wanted:
                launch()
        return results
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
