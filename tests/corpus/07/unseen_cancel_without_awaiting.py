# mistake: waits for jobs.join(), cancels the workers, and returns without awaiting them
# violates: worker tasks were cancelled but still running when run_pipeline returned: after cancel
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "end every worker cleanly ... no worker may be left running when run_pipeline returns"
# breaks: the worker tasks are still pending (not done) at the moment run_pipeline returns
# how: after the return, any(not w.done() for w in worker tasks) is True
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

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    for index, item in enumerate(items):
        await jobs.put((index, item))
    await jobs.join()
    for w in workers:
        w.cancel()
    return results
