# mistake: collects with result() and no timeout, so a stuck job holds the caller forever
# violates: must raise TimeoutError
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results = []
    in_flight: deque[Future] = deque()
    try:
        for item in items:
            if len(in_flight) >= max_in_flight:
                results.append(in_flight.popleft().result())
            in_flight.append(pool.submit(fn, item))
        while in_flight:
            results.append(in_flight.popleft().result())
    finally:
        for future in in_flight:
            future.cancel()
    return results
