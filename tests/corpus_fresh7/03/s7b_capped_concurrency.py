# mistake: "politely" caps concurrency with a Semaphore(64), so big groups do not all start at once
# violates: "every call started at once"
# from: red team, session 7 (unseen tests)
import asyncio
async def score_group(names, score_one):
    limit = asyncio.Semaphore(64)
    async def one(n):
        async with limit:
            return await score_one(n)
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(n)) for n in names]
    return [t.result() for t in tasks]
