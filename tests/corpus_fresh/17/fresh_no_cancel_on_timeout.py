# mistake: waits with fut.exception(timeout) to tell a job's error from a result and cancels the outstanding futures only for a job's error, so after a TimeoutError the queued jobs still wait for a worker and later run
# violates: when map_bounded ends with an error or a timeout, no submitted job is still waiting for a worker
# from: red team, session 4 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results, window = [], deque()

    def collect_oldest():
        oldest = window.popleft()
        error = oldest.exception(timeout=timeout)  # TimeoutError propagates
        if error is not None:
            for future in window:
                future.cancel()
            raise error
        results.append(oldest.result())

    for item in items:
        if len(window) >= max_in_flight:
            collect_oldest()
        window.append(pool.submit(fn, item))
    while window:
        collect_oldest()
    return results
