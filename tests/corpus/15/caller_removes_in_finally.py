# mistake: each caller removes the entry in its own finally, so a cancelled caller drops a load still in flight
# violates: a cancelled caller must not stop or duplicate the load
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None:
        task = asyncio.create_task(load(path))
        in_flight[path] = task
    try:
        return await asyncio.shield(task)
    finally:
        in_flight.pop(path, None)
