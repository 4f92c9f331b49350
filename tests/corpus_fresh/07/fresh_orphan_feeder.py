# mistake: feeds the queue from a task started outside the TaskGroup and never cancelled, so after a worker's error the feeder stays blocked on the full queue forever
# violates: no worker, and no task it started, left running
# from: red team, session 4 (unseen tests)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results = [None] * len(items)
    stop = object()

    async def feed():
        for index, item in enumerate(items):
            await jobs.put((index, item))
        for _ in range(n_workers):
            await jobs.put(stop)

    async def worker():
        while True:
            job = await jobs.get()
            if job is stop:
                return
            index, item = job
            results[index] = await process(item)

    feeder = asyncio.create_task(feed())
    async with asyncio.TaskGroup() as tg:
        for _ in range(n_workers):
            tg.create_task(worker())
    await feeder
    return results
