# mistake: when the window is full, collects the whole window before submitting more (batches)
# violates: time, item) submitted
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "when the limit is reached, collect the oldest future's result before submitting the next item"
# breaks: after the limit is reached, a slow job holds back every following submission; fewer than max_in_flight run
# how: max_in_flight 3, job 1 slow (0.3 s), others 10 ms, pool of 4: item 3 is submitted only after job 1 ends
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    window = []
    results = []
    try:
        for item in items:
            if len(window) >= max_in_flight:
                results.extend(f.result(timeout=timeout) for f in window)
                window = []
            window.append(pool.submit(fn, item))
        results.extend(f.result(timeout=timeout) for f in window)
        return results
    except BaseException:
        for fut in window:
            fut.cancel()
        raise
