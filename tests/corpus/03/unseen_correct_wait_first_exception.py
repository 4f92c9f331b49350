# mistake: manual tasks + asyncio.wait(FIRST_EXCEPTION), cleanup in finally (cancel + wait): a caller's cancel that lands while the finally waits for a slow cleanup interrupts that wait, so the CancelledError reaches the caller with a call still cleaning up (first judged correct; the per-caller scenarios of session 5 drew the case)
# violates: left running when score_group ended (cancelled)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = [asyncio.ensure_future(score_one(name)) for name in names]
    try:
        if tasks:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        errors = [t.exception() for t in tasks
                  if t.done() and not t.cancelled() and t.exception() is not None]
        if errors:
            raise ExceptionGroup("score_group failed", errors)
        return [t.result() for t in tasks]
    finally:
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks)
