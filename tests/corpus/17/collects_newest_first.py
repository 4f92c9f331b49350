# mistake: keeps the futures in a list and collects with pop(), the newest instead of the oldest
# violates: results must come back in input order
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results = []
    in_flight: list[Future] = []
    try:
        for item in items:
            if len(in_flight) >= max_in_flight:
                results.append(in_flight.pop().result(timeout=timeout))
            in_flight.append(pool.submit(fn, item))
        while in_flight:
            results.append(in_flight.pop().result(timeout=timeout))
    finally:
        for future in in_flight:
            future.cancel()
    return results
