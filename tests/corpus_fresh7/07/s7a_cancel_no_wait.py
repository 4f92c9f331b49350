# mistake: after join() it cancels the idle workers and returns without waiting for them to end
# violates: when it ends -- "no worker ... left running" when run_pipeline returns
# from: red team, session 7 (unseen tests)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    results = [None] * len(items)

    async def worker() -> None:
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
    return results
