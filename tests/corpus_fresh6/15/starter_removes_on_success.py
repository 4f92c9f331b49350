# mistake: only the caller that started the load removes the entry, and only after a successful result
# violates: the entry is gone once the load has ended, with an error too or with every caller cancelled, so that a later call loads afresh
# from: red team, session 6 (unseen tests)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    if path in in_flight:
        return await asyncio.shield(in_flight[path])
    task = in_flight[path] = asyncio.create_task(load(path))
    result = await asyncio.shield(task)
    del in_flight[path]
    return result
