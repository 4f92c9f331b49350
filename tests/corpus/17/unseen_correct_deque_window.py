# correct: deque of outstanding futures; pops the oldest when the window is full; cancels the rest on any error
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
from collections import deque as _deque

def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    window = _deque()
    results = []
    try:
        for item in items:
            if len(window) >= max_in_flight:
                results.append(window.popleft().result(timeout=timeout))
            window.append(pool.submit(fn, item))
        while window:
            results.append(window.popleft().result(timeout=timeout))
        return results
    except BaseException:
        for fut in window:
            fut.cancel()
        raise
