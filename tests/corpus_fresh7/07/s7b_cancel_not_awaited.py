# mistake: after jobs.join() cancels the workers but returns without awaiting them
# violates: "end every worker cleanly once all items are handled: no worker may be left running when run_pipeline returns"
# from: red team, session 7 (unseen tests)
import asyncio
async def run_pipeline(items, process, n_workers, jobs):
    results = [None] * len(items)
    async def worker():
        while True:
            i, item = await jobs.get()
            try:
                results[i] = await process(item)
            finally:
                jobs.task_done()
    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    for i, item in enumerate(items):
        await jobs.put((i, item))
    await jobs.join()
    for w in workers:
        w.cancel()
    return results
