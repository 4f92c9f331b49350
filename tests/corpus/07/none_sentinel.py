# mistake: stops each worker with an (index, None) job put after the items and tests `item is None`, so an item that is itself None stops a worker early: it is never processed and the pipeline hangs or comes back short
# violates: ended with 'raised KeyError' where the contract says 'returned'
# from: red team, session 4 (unseen tests)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results = {}

    async def worker():
        while True:
            index, item = await jobs.get()
            if item is None:
                return
            results[index] = await process(item)

    async with asyncio.TaskGroup() as tg:
        for _ in range(n_workers):
            tg.create_task(worker())
        for index, item in enumerate(items):
            await jobs.put((index, item))
        for _ in range(n_workers):
            await jobs.put((None, None))
    return [results[i] for i in range(len(items))]
