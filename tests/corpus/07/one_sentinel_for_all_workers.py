# mistake: puts a single None on the queue, so only one worker ever stops
# violates: every worker must be told to stop
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results: list = [None] * len(items)

    async def worker() -> None:
        while True:
            job = await jobs.get()
            if job is None:
                break
            index, item = job
            results[index] = await process(item)

    async with asyncio.TaskGroup() as tg:
        for _ in range(n_workers):
            tg.create_task(worker())
        for job in enumerate(items):
            await jobs.put(job)
        await jobs.put(None)
    return results
