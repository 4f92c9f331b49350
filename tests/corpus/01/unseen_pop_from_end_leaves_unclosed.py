# mistake: creates the objects in a loop, then pops from the end until empty; after an error or a cancel the objects still in the list stay unclosed
# violates: nothing left to warn
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/ (correct under the contract before item 5; wrong since exercise 1.1 asks to close what it does not await)
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    pending = []
    for job_id in job_ids:
        pending.append(record_job(job_id, log))
    results = []
    while pending:
        results.append(await pending.pop())
    return results
