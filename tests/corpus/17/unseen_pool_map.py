# mistake: relies on Executor.map with its timeout, trusting the pool size as the bound
# violates: jobs ran at once with max_in_flight=
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "The pool may have more workers than max_in_flight: the bound must come from your code"
# breaks: every item is submitted up front; with a big pool all run at once
# how: pool of 8 workers, max_in_flight 2, 8 jobs: peak concurrency 8
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    return list(pool.map(fn, items, timeout=timeout))
