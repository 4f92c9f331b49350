# mistake: removes the entry after a successful await only, so a failed load stays in in_flight
# violates: a failed load must leave in_flight too
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None:
        task = asyncio.create_task(load(path))
        in_flight[path] = task
    result = await asyncio.shield(task)
    in_flight.pop(path, None)
    return result
