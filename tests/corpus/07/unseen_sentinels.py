# mistake: written as a correct answer (workers end on a private sentinel object (one per worker); results stored by index) against a statement then silent on this path; the Graded list now settles it the other way
# violates: run_pipeline ended with
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (sent in as a correct answer)
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    done_marker = object()
    results = [None] * len(items)

    async def worker():
        while True:
            job = await jobs.get()
            try:
                if job is done_marker:
                    return
                index, item = job
                results[index] = await process(item)
            finally:
                jobs.task_done()

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    try:
        for index, item in enumerate(items):
            await jobs.put((index, item))
        for _ in workers:
            await jobs.put(done_marker)
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return results
