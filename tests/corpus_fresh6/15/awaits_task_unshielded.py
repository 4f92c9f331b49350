# mistake: every caller awaits the shared task directly, without asyncio.shield
# violates: a cancelled caller stops waiting but the load carries on for the others (here cancelling one caller cancels the load for all)
# from: red team, session 6 (unseen tests)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None:
        task = asyncio.create_task(load(path))
        in_flight[path] = task
        task.add_done_callback(lambda done: in_flight.pop(path, None))
    return await task
