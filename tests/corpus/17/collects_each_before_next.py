# mistake: waits for each job right after submitting it, so jobs run one at a time
# violates: the jobs ran one by one
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results = []
    for item in items:
        future = pool.submit(fn, item)
        results.append(future.result(timeout=timeout))
    return results
