# mistake: collects results in finishing order, then sorts them to "restore item order"
# violates: the results must follow item order, not the order the items finished in: send each item
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "return the results in the order of items, whatever order they finish in"
# breaks: only works when results grow with the items; any other mapping comes back scrambled
# how: items [3, 1, 2] with process x -> 2*x: returns [2, 4, 6] instead of [6, 2, 4]
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    results = []
    stop = object()

    async def worker():
        while True:
            item = await jobs.get()
            if item is stop:
                return
            results.append(await process(item))

    workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
    for item in items:
        await jobs.put(item)
    for _ in workers:
        await jobs.put(stop)
    await asyncio.gather(*workers)
    return sorted(results)
