# mistake: appends each result when it is ready, so results come in finishing order
# violates: must follow item order
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results: list = []

    async def worker() -> None:
        while True:
            item = await jobs.get()
            if item is None:
                return
            results.append(await process(item))

    async with asyncio.TaskGroup() as tg:
        for _ in range(n_workers):
            tg.create_task(worker())
        for item in items:
            await jobs.put(item)
        for _ in range(n_workers):
            await jobs.put(None)
    return results
