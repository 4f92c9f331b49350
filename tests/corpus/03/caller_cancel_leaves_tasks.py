# mistake: on the caller's cancellation, asyncio.wait is interrupted and the calls are never cancelled
# violates: when the cancelled caller got its CancelledError
# breaks: leave no task running when score_group raises, including when the caller cancels it
# how: cleanup sits in `except Exception`; a CancelledError from the caller skips it, and gather's own cancel is not awaited
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    if not names:
        return []
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    failed = [t.exception() for t in tasks if t in done and not t.cancelled() and t.exception()]
    if failed:
        for t in tasks:
            t.cancel()
        await asyncio.wait(tasks, timeout=2)
        raise ExceptionGroup("scoring failed", failed)
    return [t.result() for t in tasks]
