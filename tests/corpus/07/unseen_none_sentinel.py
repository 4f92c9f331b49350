# mistake: puts bare items on the queue, keeps results by item, and ends workers with a None sentinel
# violates: process every item once (a repeated item too)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "each repeatedly takes a job ... and runs await process(item)" for every item; results in item order
# breaks: an item that is itself None stops a worker early; that item is never processed and its result is missing
# how: items [1, None, 2] with a process that maps None to "none": result is [2, None, 4] instead of [2, "none", 4]
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results = {}

    async def worker():
        while True:
            item = await jobs.get()
            try:
                if item is None:
                    return
                results[item] = await process(item)
            finally:
                jobs.task_done()

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    for item in items:
        await jobs.put(item)
    for _ in workers:
        await jobs.put(None)
    await asyncio.gather(*workers)
    return [results.get(item) for item in items]
