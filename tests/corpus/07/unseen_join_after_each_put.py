# mistake: waits for jobs.join() after every put "so the queue never overflows"
# violates: items were processed at once by
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "With n_workers workers, up to n_workers items should be processed at once"
# breaks: items are processed strictly one at a time; the other workers stay idle
# how: 6 items each sleeping 20 ms, 3 workers: peak concurrency 1 and ~120 ms instead of ~40 ms
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results = [None] * len(items)

    async def worker():
        while True:
            index, item = await jobs.get()
            try:
                results[index] = await process(item)
            finally:
                jobs.task_done()

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    try:
        for index, item in enumerate(items):
            await jobs.put((index, item))
            await jobs.join()
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return results
