# mistake: creates the objects first, then hands them reversed to asyncio.gather instead of awaiting one by one
# violates: each body must start only when it is awaited, after the previous one has finished, last
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "then await them one by one in reverse order" / "each body started only when it was awaited"
# breaks: every body starts before the previous one has finished (they overlap)
# how: with a record_job that also logs "end N": log is start 3, start 2, start 1, end 3, ... instead of start 3, end 3, start 2, ...
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    coros = [record_job(job_id, log) for job_id in job_ids]
    return list(await asyncio.gather(*reversed(coros)))
