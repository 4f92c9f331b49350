# mistake: gather(return_exceptions=True), then raises an ExceptionGroup of whatever failed
# violates: the other calls must be cancelled, not allowed to finish
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if any call fails, cancel the others"
# breaks: the other calls are not cancelled; a failure is reported only after the slowest call has finished
# how: one call fails at 10 ms, another sleeps 300 ms: the ExceptionGroup arrives after 300 ms and the slow call completed instead of being cancelled
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    results = await asyncio.gather(*(score_one(name) for name in names), return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        raise ExceptionGroup("score_group failed", errors)
    return list(results)
