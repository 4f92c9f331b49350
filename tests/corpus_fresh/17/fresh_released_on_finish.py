# mistake: bounds the jobs with a semaphore released when a job finishes, not when its result is collected, so finished but uncollected results pile up beyond max_in_flight and a failing job is noticed only after everything was submitted
# violates: never more than max_in_flight submitted and not yet collected
# from: red team, session 4 (unseen tests)
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    slots = threading.BoundedSemaphore(max_in_flight)
    futures = []
    try:
        for item in items:
            slots.acquire()
            future = pool.submit(fn, item)
            future.add_done_callback(lambda _f: slots.release())
            futures.append(future)
        return [future.result(timeout=timeout) for future in futures]
    except BaseException:
        for future in futures:
            future.cancel()
        raise
