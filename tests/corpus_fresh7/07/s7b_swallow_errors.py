# mistake: the worker catches exceptions from process and stores them as results so the pipeline keeps going
# violates: "when a call of process raises, the error comes out ... nothing new starts after it"
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
                try:
                    results[i] = await process(item)
                except Exception as e:
                    results[i] = e
            finally:
                jobs.task_done()
    async with asyncio.TaskGroup() as tg:
        for _ in range(n_workers):
            tg.create_task(worker())
        for i, item in enumerate(items):
            await jobs.put((i, item))
        for _ in range(n_workers):
            await jobs.put(_STOP)
    return results
