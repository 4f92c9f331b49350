# mistake: keeps the coroutine objects in a dict keyed by job id, then walks the keys backwards
# violates: (repeats too)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "create one coroutine object ... for every id" and return one result per id
# breaks: a repeated id keeps only its last object; the other is never awaited (result lost, RuntimeWarning)
# how: run_in_reverse([1, 1, 2], log) returns 2 results instead of 3
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    coros = {job_id: record_job(job_id, log) for job_id in job_ids}
    results = []
    for job_id in reversed(list(coros)):
        results.append(await coros[job_id])
    return results
