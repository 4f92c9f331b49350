# mistake: records the task and never removes it (a cache, not a share of work in flight)
# violates: finished loads must leave in_flight, so a later call loads afresh
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "It must disappear from in_flight as soon as it finishes ... so that a later call loads afresh"
# breaks: a later call returns the old result (or re-raises the old error) without loading again
# how: load once, then call again after it finished: load count stays 1 and in_flight is not empty
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    if path not in in_flight:
        in_flight[path] = asyncio.ensure_future(load(path))
    return await asyncio.shield(in_flight[path])
