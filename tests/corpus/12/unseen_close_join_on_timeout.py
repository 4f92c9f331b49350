# mistake: cleans up with pool.close(); pool.join() (the polite shutdown) in finally
# violates: parallel_starmap
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "multiprocessing.TimeoutError once timeout has passed ... with the call back by then (not after the overrunning calls end)"
# breaks: after the timeout, join waits for the overrunning calls, so the TimeoutError arrives only when they end
# how: one call sleeping 3 s, timeout 0.5: TimeoutError comes after ~3 s
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
    finally:
        pool.close()
        pool.join()
