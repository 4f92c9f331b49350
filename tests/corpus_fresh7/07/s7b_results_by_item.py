# mistake: stores results in a dict keyed by the item, so a repeated item shares one result
# violates: "a repeated item gets the result of its own call"
# from: red team, session 7 (unseen tests)
import asyncio
_STOP = object()
async def run_pipeline(items, process, n_workers, jobs):
    results = {}
    async def worker():
        while True:
            item = await jobs.get()
            try:
                if item is _STOP:
                    return
                results[item] = await process(item)
            finally:
                jobs.task_done()
    async with asyncio.TaskGroup() as tg:
        for _ in range(n_workers):
            tg.create_task(worker())
        for item in items:
            await jobs.put(item)
        for _ in range(n_workers):
            await jobs.put(_STOP)
    return [results[item] for item in items]
