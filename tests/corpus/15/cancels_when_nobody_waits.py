# mistake: counts the waiters and cancels the load when the last one is cancelled ("nobody wants it any more"), so a caller that arrives after everyone was cancelled cannot join the load, which is gone
# violates: join the load in flight for the path (a cancelled caller must not stop it)
# from: red team, session 4 (unseen tests)
_waiters: dict = {}


async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None:
        task = asyncio.create_task(load(path))
        in_flight[path] = task

        def forget(finished, path=path):
            if in_flight.get(path) is finished:
                del in_flight[path]

        task.add_done_callback(forget)
    _waiters[task] = _waiters.get(task, 0) + 1
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if _waiters[task] == 1 and not task.done():
            task.cancel()
        raise
    finally:
        _waiters[task] -= 1
        if not _waiters[task]:
            del _waiters[task]
