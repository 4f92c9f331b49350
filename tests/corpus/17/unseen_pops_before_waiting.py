# mistake: pops the oldest future off the window before waiting on it, so when that wait times out the future is in no list and is never cancelled: on a pool busy with other work it is still queued, and runs after map_bounded has given up
# violates: still waiting to run
# breaks: filed as correct by the unseen red team (issue 37); the course's own reference had the same line until session 18, when a learner reading the page asked what becomes of the popped future; the generated scenarios then had no pool shared with other work, so no wait could time out on a queued job
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
