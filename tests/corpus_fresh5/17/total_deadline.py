# mistake: treats `timeout` as one budget for the whole map, so later results get less than `timeout` to arrive
# violates: each result may take up to `timeout` seconds counted from when the wait for it starts
# from: red team, session 5 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    deadline = time.monotonic() + timeout
    in_flight = deque()
    results = []

    def collect_oldest():
        remaining = max(0.0, deadline - time.monotonic())
        results.append(in_flight[0].result(timeout=remaining))
        in_flight.popleft()

    try:
        for item in items:
            if len(in_flight) >= max_in_flight:
                collect_oldest()
            in_flight.append(pool.submit(fn, item))
        while in_flight:
            collect_oldest()
    except BaseException:
        for future in in_flight:
            future.cancel()
        raise
    return results
