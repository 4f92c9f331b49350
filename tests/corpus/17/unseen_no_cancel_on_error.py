# mistake: bounded window, but on a job's error just lets the exception escape
# violates: jobs ran after the failing one: on a failure, cancel the futures still outstanding and
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if a job raises, cancel the futures still outstanding and re-raise its exception"
# breaks: the queued jobs behind the failing one still run after map_bounded has raised
# how: pool of 1 worker, max_in_flight 3, item 0 raises: items 1 and 2 still execute afterwards
from collections import deque as _deque

def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    window = _deque()
    results = []
    for item in items:
        if len(window) >= max_in_flight:
            results.append(window.popleft().result(timeout=timeout))
        window.append(pool.submit(fn, item))
    while window:
        results.append(window.popleft().result(timeout=timeout))
    return results
