# mistake: feeder and workers under plain asyncio.gather: on an error the other workers and the feeder keep running
# violates: "the error comes out ... once the workers are stopped; nothing new starts after it" / "no worker ... left running"
# from: red team, session 7 (unseen tests)
import asyncio
_STOP = object()
async def run_pipeline(items, process, n_workers, jobs):
    results = [None] * len(items)
    async def worker():
        while True:
            job = await jobs.get()
            try:
                if job is _STOP:
                    return
                i, item = job
                results[i] = await process(item)
            finally:
                jobs.task_done()
    async def feed():
        for i, item in enumerate(items):
            await jobs.put((i, item))
        for _ in range(n_workers):
            await jobs.put(_STOP)
    await asyncio.gather(feed(), *(worker() for _ in range(n_workers)))
    return results
