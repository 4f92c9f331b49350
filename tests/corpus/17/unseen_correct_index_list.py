# correct: keeps every future in a list and a "next to collect" index; collects by index, cancels futures[collected:] on failure
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    futures = []
    results = []

    def collect_oldest():
        fut = futures[len(results)]
        try:
            results.append(fut.result(timeout=timeout))
        except BaseException:
            for later in futures[len(results):]:
                later.cancel()
            raise

    for item in items:
        while len(futures) - len(results) >= max_in_flight:
            collect_oldest()
        futures.append(pool.submit(fn, item))
    while len(results) < len(futures):
        collect_oldest()
    return results
