# mistake: counts each job's timeout from when it was submitted ("every job gets `timeout` seconds"), so a job that waited in the window behind slower ones gets less than `timeout` seconds of waiting and times out early
# violates: counted from when you start waiting for it
# from: red team, session 4 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results, window = [], deque()

    def collect_oldest():
        future, submitted = window.popleft()
        try:
            results.append(future.result(timeout=max(0.0, submitted + timeout - time.monotonic())))
        except BaseException:
            for other, _ in window:
                other.cancel()
            raise

    for item in items:
        if len(window) >= max_in_flight:
            collect_oldest()
        window.append((pool.submit(fn, item), time.monotonic()))
    while window:
        collect_oldest()
    return results
