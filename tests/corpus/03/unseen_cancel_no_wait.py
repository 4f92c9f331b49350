# mistake: on the first failure cancels the other tasks but raises at once without waiting for them
# violates: calls were still running when score_group raised: cancel the others and wait until they
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "cancel the others, wait until they are gone"
# breaks: when the ExceptionGroup reaches the caller the siblings are still pending (their cleanup has not run)
# how: one call fails; a sibling with a `finally` cleanup: at the caller's except*, the sibling task is not done
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    tasks = [asyncio.create_task(score_one(name)) for name in names]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    errors = [t.exception() for t in done if t.exception() is not None]
    if errors:
        for t in pending:
            t.cancel()
        raise ExceptionGroup("score_group failed", errors)
    return [t.result() for t in tasks]
