# mistake: workers are bare create_task()s with sentinel shutdown; a cancel of the caller leaves them running
# violates: "when the caller cancels run_pipeline, it ends cancelled once the workers are stopped"
# from: red team, session 7 (unseen tests)
import asyncio
async def run_pipeline(items, process, n_workers, jobs):
    results = [None] * len(items)
    async def worker():
        while True:
            job = await jobs.get()
            try:
                if job is None:
                    return
                i, item = job
                results[i] = await process(item)
            finally:
                jobs.task_done()
    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    for i, item in enumerate(items):
        await jobs.put((i, item))
    for _ in workers:
        await jobs.put(None)
    await asyncio.wait(workers)
    for w in workers:
        w.result()
    return results
