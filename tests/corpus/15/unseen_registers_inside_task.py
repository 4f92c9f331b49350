# mistake: the task registers itself in in_flight when it starts running (so "the task owns its entry")
# violates: 5 loads for 2 distinct paths: a caller must join the load al
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "one load per path in flight" when callers arrive together
# breaks: between create_task and the task's first step, other callers see no entry and start their own loads
# how: gather of 4 callers for one path: 4 loads run instead of 1
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    if path in in_flight:
        return await asyncio.shield(in_flight[path])

    async def run_load():
        in_flight[path] = asyncio.current_task()
        try:
            return await load(path)
        finally:
            if in_flight.get(path) is asyncio.current_task():
                del in_flight[path]

    return await asyncio.shield(asyncio.ensure_future(run_load()))
