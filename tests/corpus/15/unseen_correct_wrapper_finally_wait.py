# correct: the task runs a wrapper that removes its own entry in finally; callers wait with asyncio.wait (never cancels the task) and then read the result
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    if path not in in_flight:
        async def run_load():
            try:
                return await load(path)
            finally:
                if in_flight.get(path) is me:
                    in_flight.pop(path)

        me = asyncio.create_task(run_load())
        in_flight[path] = me
    task = in_flight[path]
    await asyncio.wait({task})
    return task.result()
