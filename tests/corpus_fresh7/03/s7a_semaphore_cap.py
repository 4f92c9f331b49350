# mistake: caps concurrency at 100 calls with a semaphore "to protect the reward model"
# violates: calls -- "every call started at once" (over a hundred names)
# from: red team, session 7 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    limit = asyncio.Semaphore(100)

    async def one(name):
        async with limit:
            return await score_one(name)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(name)) for name in names]
    return [task.result() for task in tasks]
