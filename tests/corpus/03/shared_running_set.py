# mistake: keeps the strong references in one module-level set, as the chapter taught, and on a failure cancels everything in that set, so one caller's failure cancels another caller's calls
# violates: ended with 'cancelled' where the contract says 'returned'
# from: red team, session 4 (unseen tests)
_running: set = set()


async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = []
    for name in names:
        task = asyncio.create_task(score_one(name))
        _running.add(task)
        task.add_done_callback(_running.discard)
        tasks.append(task)
    try:
        return list(await asyncio.gather(*tasks))
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    except Exception as exc:
        victims = [t for t in _running if not t.done()]
        for task in victims:
            task.cancel()
        await asyncio.gather(*victims, return_exceptions=True)
        raise ExceptionGroup("score_group failed", [exc]) from None
