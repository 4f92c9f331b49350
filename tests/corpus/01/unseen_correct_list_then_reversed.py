# correct: builds a list of coroutine objects, then awaits them with reversed()
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    coros = [record_job(job_id, log) for job_id in job_ids]
    results = []
    for coro in reversed(coros):
        results.append(await coro)
    return results
