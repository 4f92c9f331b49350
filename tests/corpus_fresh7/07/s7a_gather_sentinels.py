# mistake: sentinel shutdown + gather(*workers): when process raises, gather raises but the other workers run on
# violates: errors -- the error comes out "once the workers are stopped; nothing new starts after it"
# from: red team, session 7 (unseen tests)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    results = [None] * len(items)
    done = object()

    async def worker() -> None:
        while True:
            job = await jobs.get()
            if job is done:
                return
            index, item = job
            results[index] = await process(item)

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    for index, item in enumerate(items):
        await jobs.put((index, item))
    for _ in workers:
        await jobs.put(done)
    await asyncio.gather(*workers)
    return results
