# mistake: runs the items with gather and a semaphore and never uses the given queue
# violates: the items must go through the given queue
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    sem = asyncio.Semaphore(n_workers)

    async def one(item):
        async with sem:
            return await process(item)

    return list(await asyncio.gather(*(one(item) for item in items)))
