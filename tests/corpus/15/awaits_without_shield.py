# mistake: awaits the shared task directly, so one cancelled caller cancels the load for everyone
# violates: the other callers must still get the result
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None:
        task = asyncio.create_task(load(path))
        in_flight[path] = task
        task.add_done_callback(lambda finished: in_flight.pop(path, None))
    return await task
