# mistake: skips step 1 and creates each coroutine object just before awaiting it, walking the ids backwards
# violates: every coroutine object must be created first, in the given order, before any body runs
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "first create one coroutine object record_job(job_id, log) for every id, in the given order"
# breaks: objects are created in reverse order and interleaved with the runs
# how: wrap record_job to log "create N" on call: log is create 3, start 3, create 2, ... not create 1, create 2, create 3, start 3...
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    results = []
    for job_id in reversed(job_ids):
        results.append(await record_job(job_id, log))
    return results
