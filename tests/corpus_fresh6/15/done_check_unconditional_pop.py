# mistake: starts a fresh load when the recorded task is already done, but the old task's done-callback pops the path unconditionally, removing the fresh load's entry
# violates: one load per path in flight, never two; the entry stays in in_flight until its own load ends
# from: red team, session 6 (unseen tests)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None or task.done():  # a finished load is not shared: load afresh
        task = asyncio.create_task(load(path))
        in_flight[path] = task
        task.add_done_callback(lambda _: in_flight.pop(path, None))
    return await asyncio.shield(task)
