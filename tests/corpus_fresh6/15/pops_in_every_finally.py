# mistake: each caller removes the entry in its own finally, so the first caller to leave (cancelled) forgets a load that is still running
# violates: one load per path in flight, never two; the entry stays until its load ends, and a caller arriving after a cancel joins the same load
# from: red team, session 6 (unseen tests)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None:
        task = in_flight[path] = asyncio.create_task(load(path))
    try:
        return await asyncio.shield(task)
    finally:
        in_flight.pop(path, None)  # this call is over: forget the load
