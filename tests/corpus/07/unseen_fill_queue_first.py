# mistake: puts every item on the queue before starting the workers
# violates: every worker must be told to stop once the items are handled
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "put every item on jobs (the bound makes this wait when the workers fall behind)" — the workers must already be running
# breaks: with more items than the queue bound, the producer waits forever for a free slot nobody will make
# how: 5 items, Queue(maxsize=2): run_pipeline never returns (caught by a 1 s timeout)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results = [None] * len(items)
    for index, item in enumerate(items):
        await jobs.put((index, item))

    async def worker():
        while not jobs.empty():
            index, item = jobs.get_nowait()
            results[index] = await process(item)
            jobs.task_done()

    await asyncio.gather(*(worker() for _ in range(n_workers)))
    return results
