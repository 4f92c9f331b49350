# mistake: "reverse order" read as "largest id first": sorts the ids descending
# violates: then await them one by one, last id first
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "await them one by one in reverse order" (reverse of the given order)
# breaks: ids not given in ascending order come back in the wrong order
# how: run_in_reverse([2, 3, 1], log) -> job 3, job 2, job 1 instead of job 1, job 3, job 2
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    coros = sorted(((job_id, record_job(job_id, log)) for job_id in job_ids),
                   key=lambda pair: pair[0], reverse=True)
    results = []
    for _, coro in coros:
        results.append(await coro)
    return results
