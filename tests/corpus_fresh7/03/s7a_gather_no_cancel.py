# mistake: plain gather wrapped into an ExceptionGroup; the siblings of a failed call are never cancelled
# violates: errors -- "cancel the others, wait until they are gone"; no call left running after the raise
# from: red team, session 7 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    try:
        return list(await asyncio.gather(*(score_one(name) for name in names)))
    except Exception as exc:
        raise ExceptionGroup("score_group failed", [exc]) from None
