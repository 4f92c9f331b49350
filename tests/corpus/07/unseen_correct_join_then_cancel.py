# correct: jobs.join() then cancel the idle workers and wait for them; results in a dict keyed by index
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    out = {}

    async def worker():
        while True:
            index, item = await jobs.get()
            try:
                out[index] = await process(item)
            finally:
                jobs.task_done()

    async with asyncio.TaskGroup() as tg:
        workers = [tg.create_task(worker()) for _ in range(n_workers)]
        for index, item in enumerate(items):
            await jobs.put((index, item))
        await jobs.join()
        for w in workers:
            w.cancel()
    return [out[i] for i in range(len(items))]
