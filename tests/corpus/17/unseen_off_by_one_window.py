# mistake: submits first and collects only when the window has grown *past* the limit
# violates: jobs ran at once with max_in_flight=
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "never have more than max_in_flight submitted and not yet collected"
# breaks: max_in_flight + 1 jobs are outstanding (and running, if the pool has the workers)
# how: pool of 8 workers, max_in_flight 2, jobs sleeping 50 ms: peak concurrency 3
from collections import deque as _deque

def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    window = _deque()
    results = []
    try:
        for item in items:
            window.append(pool.submit(fn, item))
            if len(window) > max_in_flight:
                results.append(window.popleft().result(timeout=timeout))
        while window:
            results.append(window.popleft().result(timeout=timeout))
        return results
    except BaseException:
        for fut in window:
            fut.cancel()
        raise
