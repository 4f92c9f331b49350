# mistake: cancels the idle workers after join() but returns before they have finished
# violates: cancelled but still running
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results: list = [None] * len(items)

    async def worker() -> None:
        while True:
            index, item = await jobs.get()
            try:
                results[index] = await process(item)
            finally:
                jobs.task_done()

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    for job in enumerate(items):
        await jobs.put(job)
    await jobs.join()
    for w in workers:
        w.cancel()
    return results
