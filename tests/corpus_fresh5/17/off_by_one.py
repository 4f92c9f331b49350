# mistake: checks the limit after collecting with `>` instead of `>=`, so max_in_flight + 1 jobs are outstanding
# violates: never more than max_in_flight jobs submitted and not yet collected
# from: red team, session 5 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    in_flight = deque()
    results = []
    try:
        for item in items:
            if len(in_flight) > max_in_flight:
                results.append(in_flight[0].result(timeout=timeout))
                in_flight.popleft()
            in_flight.append(pool.submit(fn, item))
        while in_flight:
            results.append(in_flight[0].result(timeout=timeout))
            in_flight.popleft()
    except BaseException:
        for future in in_flight:
            future.cancel()
        raise
    return results
