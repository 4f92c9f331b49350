# mistake: keeps the jobs in one module-level set (the chapter 03 idiom for strong references) and, when a job raises, cancels everything in that set, so one caller's failing job cancels another caller's jobs
# violates: ended (cancelled) though too few jobs end
# from: red team, session 4 (unseen tests)
_running: set = set()


async def first_results(start_work, wanted: int, limit: int) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight."""
    mine: set = set()
    results: list = []
    next_job = 0

    def start():
        nonlocal next_job
        task = asyncio.create_task(start_work(next_job))
        next_job += 1
        _running.add(task)
        task.add_done_callback(_running.discard)
        mine.add(task)

    try:
        while len(results) < wanted:
            while len(mine) < limit:
                start()
            done, _ = await asyncio.wait(mine, return_when=asyncio.FIRST_COMPLETED)
            mine -= done
            for task in done:
                if task.exception() is not None:
                    for other in list(_running):
                        other.cancel()
                    await asyncio.gather(*_running, return_exceptions=True)
                    raise task.exception()
                if len(results) < wanted:
                    results.append(task.result())
        return results
    finally:
        for task in mine:
            task.cancel()
        if mine:
            await asyncio.gather(*mine, return_exceptions=True)
