# mistake: asyncio.wait(FIRST_EXCEPTION) handles errors well, but asyncio.wait does not cancel its tasks when the caller is cancelled
# violates: cancellation -- "the calls are cancelled, and gone, before the CancelledError reaches the caller"
# from: red team, session 7 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    if not tasks:
        return []
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    if pending:
        for task in pending:
            task.cancel()
        await asyncio.wait(pending)
    errors = [t.exception() for t in done if not t.cancelled() and t.exception() is not None]
    if errors:
        raise ExceptionGroup("score_group failed", errors)
    return [task.result() for task in tasks]
