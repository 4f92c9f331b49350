# mistake: the chapter's update_weights shape: the first caller runs the load itself and the others await a future it fills; cancelling the first caller cancels the load
# violates: a cancelled caller stops waiting, but the load carries on for the others, and a caller arriving after the cancel still joins it
# from: red team, session 6 (unseen tests)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    shared = in_flight.get(path)
    if shared is not None:
        return await asyncio.shield(shared)
    shared = in_flight[path] = asyncio.get_running_loop().create_future()
    try:
        result = await load(path)
        shared.set_result(result)
        return result
    except Exception as exc:
        shared.set_exception(exc)
        raise
    finally:
        if not shared.done():
            shared.cancel()
        del in_flight[path]
