# mistake: bounds the wait for the cancelled calls' cleanup to 1 s ("never hang"), so a call whose cleanup takes longer is still running after the error or the cancel comes out
# violates: when it ends
# from: red team, session 4 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    if not tasks:
        return []
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=1.0)  # bounded, so a stuck cleanup cannot hang us
        raise
    errors = [t.exception() for t in done if not t.cancelled() and t.exception() is not None]
    if errors:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=1.0)  # bounded, so a stuck cleanup cannot hang us
        raise ExceptionGroup("score_group failed", errors)
    return [task.result() for task in tasks]
