# mistake: registers the workers in one module-level set and, on an error or a cancel, cancels every worker in that set, so one caller's failing item stops another caller's pipeline
# violates: ended with 'cancelled' where the contract says 'returned'
# from: red team, session 4 (unseen tests)
_workers: set = set()


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

    mine = []
    for _ in range(n_workers):
        task = asyncio.create_task(worker())
        _workers.add(task)
        task.add_done_callback(_workers.discard)
        mine.append(task)

    async def feed():
        for index, item in enumerate(items):
            await jobs.put((index, item))
        await jobs.join()

    feeder = asyncio.create_task(feed())
    try:
        done, _ = await asyncio.wait([feeder, *mine], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not feeder or task.exception() is not None:
                task.result()
        return results
    except BaseException:
        everyone = [feeder, *_workers]
        for task in everyone:
            task.cancel()
        await asyncio.gather(*everyone, return_exceptions=True)
        raise
    finally:
        for task in [feeder, *mine]:
            task.cancel()
        await asyncio.gather(feeder, *mine, return_exceptions=True)
