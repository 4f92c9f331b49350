# mistake: removes the entry in a done callback with in_flight.pop(path) without checking it is still its own task, and skips a finished task still in the dict; a caller arriving just after a load ends registers a new load that the old callback then removes, so a later caller starts a second load of the same path
# violates: one load per path in flight, never two
# from: red team, session 4 (unseen tests)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None or task.done():
        task = asyncio.create_task(load(path))
        in_flight[path] = task
        task.add_done_callback(lambda _finished: in_flight.pop(path, None))
    return await asyncio.shield(task)
