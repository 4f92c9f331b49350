# correct: creates the objects in a loop, then pops from the end of the list until empty
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    pending = []
    for job_id in job_ids:
        pending.append(record_job(job_id, log))
    results = []
    while pending:
        results.append(await pending.pop())
    return results
