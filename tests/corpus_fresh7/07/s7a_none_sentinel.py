# mistake: puts raw items and stops a worker on a None sentinel, so an item that is None ends a worker early
# violates: calls/results -- items of "any value, None too" must each be processed, results in item order
# from: red team, session 7 (unseen tests)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    results = [None] * len(items)
    taken = iter(range(len(items)))

    async def worker() -> None:
        while True:
            item = await jobs.get()
            if item is None:
                return
            index = next(taken)  # the queue is FIFO, so items come out in order
            results[index] = await process(item)

    async with asyncio.TaskGroup() as group:
        for _ in range(n_workers):
            group.create_task(worker())
        for item in items:
            await jobs.put(item)
        for _ in range(n_workers):
            await jobs.put(None)
    return results
