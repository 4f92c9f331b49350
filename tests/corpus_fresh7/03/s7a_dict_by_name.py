# mistake: keeps the tasks in a dict keyed by name, so a repeated name is overwritten and every occurrence gets the last call's result
# violates: calls -- "a repeated name once per occurrence" / results -- "a repeated name gets the result of its own call"
# from: red team, session 7 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    async with asyncio.TaskGroup() as group:
        tasks = {name: group.create_task(score_one(name)) for name in names}
    return [tasks[name].result() for name in names]
