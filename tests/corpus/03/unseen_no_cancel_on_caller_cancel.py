# mistake: handles the failure path well but has no try/finally, so a cancelled caller leaves the calls behind
# violates: ValueError: Set of Tasks/Futures is empty
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "leave no task running ... also when the caller cancels score_group midway"
# breaks: after score_group is cancelled, all the score_one tasks keep running
# how: cancel score_group 20 ms in while calls sleep 200 ms: tasks still alive after CancelledError reached the caller
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    errors = [t.exception() for t in done if t.exception() is not None]
    if errors:
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        raise ExceptionGroup("score_group failed", errors)
    return [t.result() for t in tasks]
