# mistake: task_done() only after a successful process(): a failure kills the worker and join() waits forever
# violates: errors / when it ends -- the error must come out once the workers are stopped (here: never returns)
# from: red team, session 7 (unseen tests)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    results = [None] * len(items)

    async def worker() -> None:
        while True:
            index, item = await jobs.get()
            results[index] = await process(item)
            jobs.task_done()

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    try:
        for index, item in enumerate(items):
            await jobs.put((index, item))
        await jobs.join()
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return results
