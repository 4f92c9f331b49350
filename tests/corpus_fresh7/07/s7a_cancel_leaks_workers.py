# mistake: stops the workers on an error (except Exception) but not when the caller cancels it
# violates: cancellation -- "it ends cancelled once the workers are stopped"; no worker left running
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
    try:
        for index, item in enumerate(items):
            await jobs.put((index, item))
        for _ in workers:
            await jobs.put(done)
        await asyncio.gather(*workers)
    except Exception:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    return results
