# mistake: wraps each coroutine in asyncio.create_task "to create it now", then awaits the tasks in reverse
# violates: each body must start only when it is awaited, last id first; the log was
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "create one coroutine object ... without running any of them"; "each body started only when it was awaited"
# breaks: all bodies start at the first await, in forward order (start 1, start 2, start 3)
# how: run_in_reverse([1, 2, 3], log) -> log == ['start 1', 'start 2', 'start 3']
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    tasks = [asyncio.create_task(record_job(job_id, log)) for job_id in job_ids]
    results = []
    for task in reversed(tasks):
        results.append(await task)
    return results
