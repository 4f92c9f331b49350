# mistake: on a failure shuts the pool down with wait=False but without cancel_futures, so queued jobs still run
# violates: jobs ran after the failing one
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results = []
    in_flight: deque[Future] = deque()
    try:
        for item in items:
            if len(in_flight) >= max_in_flight:
                results.append(in_flight.popleft().result(timeout=timeout))
            in_flight.append(pool.submit(fn, item))
        while in_flight:
            results.append(in_flight.popleft().result(timeout=timeout))
    except Exception:
        pool.shutdown(wait=False)  # stop everything, don't wait for it
        raise
    return results
