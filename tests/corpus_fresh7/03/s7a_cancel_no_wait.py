# mistake: on a failure or a cancel it calls cancel() on the tasks but does not wait for their cleanup
# violates: errors/cancellation -- the error or cancel comes out only "once the calls are cleaned up"
# from: red team, session 7 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException as exc:
        for task in tasks:
            task.cancel()
        if isinstance(exc, Exception):
            raise ExceptionGroup("score_group failed", [exc]) from None
        raise
