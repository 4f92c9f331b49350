# mistake: when the limit is reached it collects whichever future finishes first, not the oldest, and keeps submitting past a job that never ends
# violates: the oldest result is collected (and timed out) before the next item is submitted; a stuck job stops the map after `timeout`
# from: red team, session 5 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    results = {}
    pending = {}
    try:
        for index, item in enumerate(items):
            if len(pending) >= max_in_flight:
                done, _ = wait(pending, timeout=timeout, return_when="FIRST_COMPLETED")
                if not done:
                    raise TimeoutError("no job finished in time")
                for future in done:
                    results[pending.pop(future)] = future.result()
            pending[pool.submit(fn, item)] = index
        while pending:
            done, _ = wait(pending, timeout=timeout, return_when="FIRST_COMPLETED")
            if not done:
                raise TimeoutError("no job finished in time")
            for future in done:
                results[pending.pop(future)] = future.result()
    except BaseException:
        for future in pending:
            future.cancel()
        raise
    return [results[index] for index in range(len(results))]
