# mistake: the first caller runs the load itself and publishes the result on a Future for the others, but only sets it on success
# violates: InvalidStateError: Exception is not set
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "An error from the load reaches every caller that waited for it"; "the load carries on" when the first caller is cancelled
# breaks: when the load fails, the joiners wait forever on a Future nobody completes (and the entry is never removed)
# how: a load that raises after 20 ms, 3 callers: the first gets the error, the other two hang (caught by a timeout)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    if path in in_flight:
        return await asyncio.shield(in_flight[path])
    fut = asyncio.get_running_loop().create_future()
    in_flight[path] = fut
    result = await load(path)
    fut.set_result(result)
    del in_flight[path]
    return result
