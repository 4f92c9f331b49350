# mistake: registers with in_flight.setdefault(path, asyncio.create_task(load(path))), whose default argument is evaluated on every call, so every joining caller starts one more load of the path that runs unseen
# violates: one load per path in flight, never two
# from: red team, session 4 (unseen tests)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.setdefault(path, asyncio.create_task(load(path)))
    if not task.done():
        task.add_done_callback(
            lambda finished: in_flight.pop(path) if in_flight.get(path) is finished else None)
    return await asyncio.shield(task)
