# mistake: on a job's error or a timeout it "cancels what is outstanding" with pool.shutdown(wait=False, cancel_futures=True), which cancels every queued job of the caller's pool, other users' included, and leaves the pool refusing new work
# violates: cancel the futures still outstanding
# from: red team, session 4 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results, window = [], deque()
    try:
        for item in items:
            if len(window) >= max_in_flight:
                results.append(window.popleft().result(timeout=timeout))
            window.append(pool.submit(fn, item))
        while window:
            results.append(window.popleft().result(timeout=timeout))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    return results
