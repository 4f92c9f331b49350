# mistake: the caller that started the load removes the entry in its own finally
# violates: loads: a cancelled caller must not stop or duplicate the load; only the load
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "A caller that is cancelled stops waiting, but ... a caller that arrives after that still joins the same load"
# breaks: when the starting caller is cancelled, the entry vanishes while the load is still running, so the next caller starts a second load
# how: caller A starts, is cancelled at 5 ms; caller B arrives at 10 ms: two loads run (load count 2)
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    if path in in_flight:
        return await asyncio.shield(in_flight[path])
    task = asyncio.ensure_future(load(path))
    in_flight[path] = task
    try:
        return await asyncio.shield(task)
    finally:
        in_flight.pop(path, None)
