# mistake: caps the fan-out with a semaphore of 8 "to be gentle on the server", so with more than 8 names the later calls start only when earlier ones end
# violates: could start at 0 s, but none had started by then
# from: red team, session 4 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    gate = asyncio.Semaphore(8)

    async def one(name):
        async with gate:
            return await score_one(name)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(name)) for name in names]
    return [task.result() for task in tasks]
