# mistake: gather(return_exceptions=True) then raise the errors: waits for every call instead of cancelling
# violates: errors / when it ends -- "cancel the others"; error must come out as soon as the others are cancelled
# from: red team, session 7 (unseen tests)
async def score_group(names: list[str], score_one) -> list:
    outcomes = await asyncio.gather(*(score_one(name) for name in names), return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if errors:
        raise ExceptionGroup("score_group failed", errors)
    return outcomes
