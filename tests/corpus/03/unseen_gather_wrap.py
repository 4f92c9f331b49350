# mistake: plain asyncio.gather; on error wraps the exception in an ExceptionGroup and re-raises
# violates: calls were still running when score_group raised: cancel the others and wait until they
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if any call fails, cancel the others, wait until they are gone"; "leave no task running"
# breaks: siblings of a failing call are not cancelled and keep running after score_group has raised
# how: one call fails at 10 ms, another sleeps 200 ms: right after the raise, the slow one is still running and later finishes
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    try:
        return list(await asyncio.gather(*(score_one(name) for name in names)))
    except Exception as exc:
        raise ExceptionGroup("score_group failed", [exc]) from None
