# mistake: shares the task correctly but every caller awaits it directly (no shield)
# violates: the other callers must still get the result when one caller is cancelled, got
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "A caller that is cancelled stops waiting, but the load carries on for everyone else"
# breaks: cancelling one caller cancels the shared load; every other caller gets CancelledError
# how: 3 callers, cancel one after 5 ms: the other two end with CancelledError instead of the weights
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    task = in_flight.get(path)
    if task is None:
        task = asyncio.ensure_future(load(path))
        in_flight[path] = task
        task.add_done_callback(lambda t: in_flight.pop(path, None))
    return await task
