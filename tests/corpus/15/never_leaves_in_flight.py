# mistake: records the task but never removes it, so in_flight turns into a cache
# violates: finished loads must leave in_flight
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    if path not in in_flight:
        in_flight[path] = asyncio.create_task(load(path))
    return await asyncio.shield(in_flight[path])
