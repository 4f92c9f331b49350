# mistake: submits every item at once and only then collects, so the bound is never applied
# violates: jobs ran at once with max_in_flight=3
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    futures = [pool.submit(fn, item) for item in items]
    try:
        return [future.result(timeout=timeout) for future in futures]
    finally:
        for future in futures:
            future.cancel()
