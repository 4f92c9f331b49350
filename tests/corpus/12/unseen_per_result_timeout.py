# mistake: gives every result its own `timeout` instead of one budget for all of them
# violates: waiting longer than `timeout` must raise multiprocessing.TimeoutError: pass the timeout
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait at most timeout seconds for all results ... counted for all the results together"
# breaks: with more calls than workers the total wait can reach n * timeout without any TimeoutError
# how: workers=1, six 0.5 s calls, timeout 2.0: returns after ~3 s (plus start-up) instead of raising at ~2 s
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        pending = [pool.apply_async(fn, args) for args in arg_tuples]
        return [p.get(timeout) for p in pending]
    finally:
        pool.terminate()
        pool.join()
