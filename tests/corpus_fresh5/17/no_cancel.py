# mistake: lets a job's error or a timeout propagate without cancelling the futures still outstanding
# violates: after an error or a timeout no submitted job is left waiting in the pool's queue
# from: red team, session 5 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    in_flight = deque()
    results = []
    for item in items:
        if len(in_flight) >= max_in_flight:
            results.append(in_flight.popleft().result(timeout=timeout))
        in_flight.append(pool.submit(fn, item))
    while in_flight:
        results.append(in_flight.popleft().result(timeout=timeout))
    return results
