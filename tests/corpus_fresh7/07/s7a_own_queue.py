# mistake: ignores the given bounded queue and makes a fresh unbounded one
# violates: calls -- "every item put through the given queue" (and the bound no longer holds the producer back)
# from: red team, session 7 (unseen tests)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    queue: asyncio.Queue = asyncio.Queue()
    results = [None] * len(items)

    async def worker() -> None:
        while True:
            index, item = await queue.get()
            try:
                results[index] = await process(item)
            finally:
                queue.task_done()

    async with asyncio.TaskGroup() as group:
        workers = [group.create_task(worker()) for _ in range(n_workers)]
        for index, item in enumerate(items):
            queue.put_nowait((index, item))
        await queue.join()
        for w in workers:
            w.cancel()
    return results
