# mistake: submits the items in batches of max_in_flight and collects a whole batch before submitting the next
# violates: while items are waiting, a new one is submitted as soon as the oldest result is collected (the window slides)
# from: red team, session 5 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    items = list(items)
    results = []
    for start in range(0, len(items), max_in_flight):
        batch = [pool.submit(fn, item) for item in items[start:start + max_in_flight]]
        try:
            for future in batch:
                results.append(future.result(timeout=timeout))
        except BaseException:
            for future in batch:
                future.cancel()
            raise
    return results
