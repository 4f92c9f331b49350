# mistake: on an error or a cancel it cancels the workers but waits at most 1 s for them to stop ("never hang"), so a worker whose process call cleans up longer is still running when run_pipeline ends
# violates: no worker, and no task it started, left running
# from: red team, session 4 (unseen tests)
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

    async def feed():
        for index, item in enumerate(items):
            await jobs.put((index, item))
        await jobs.join()

    feeder = asyncio.create_task(feed())
    everything = [feeder, *workers]
    try:
        done, _ = await asyncio.wait(everything, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not feeder or task.exception() is not None:
                task.result()
        return results
    finally:
        for task in everything:
            task.cancel()
        await asyncio.wait(everything, timeout=1.0)  # bounded: a stuck worker must not hang us
