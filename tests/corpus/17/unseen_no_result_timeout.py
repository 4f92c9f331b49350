# mistake: collects with fut.result() and no timeout ("the jobs are short")
# violates: a result that does not come within `timeout` must raise TimeoutError, while the job is
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait for each result at most timeout seconds (a TimeoutError propagates)"
# breaks: a stuck job blocks map_bounded for as long as it runs; no TimeoutError
# how: a job that sleeps 1 s with timeout 0.1: map_bounded returns after 1 s instead of raising at 0.1 s
from collections import deque as _deque

def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    window = _deque()
    results = []
    try:
        for item in items:
            if len(window) >= max_in_flight:
                results.append(window.popleft().result())
            window.append(pool.submit(fn, item))
        while window:
            results.append(window.popleft().result())
        return results
    except BaseException:
        for fut in window:
            fut.cancel()
        raise
