# mistake: holds one lock across the whole call, including the await of the load, so different paths queue
# violates: loads of different paths must run concurrently
_table_lock = asyncio.Lock()


async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    async with _table_lock:
        task = in_flight.get(path)
        if task is None:
            task = asyncio.create_task(load(path))
            in_flight[path] = task
            task.add_done_callback(lambda finished: in_flight.pop(path, None))
        return await asyncio.shield(task)
