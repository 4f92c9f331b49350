# mistake: shuts the pool down after collecting the results, but not in a finally
# violates: worker processes left behind after a failing call: leave the pool with `with`
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "leave no worker process behind, whether it returns, times out or a call raises"
# breaks: when a call raises or the timeout passes, the pool's worker processes stay alive
# how: fail_with("boom"): the error reaches the caller and `workers` spawn children are still running
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = multiprocessing.get_context("spawn").Pool(workers)
    results = pool.starmap_async(fn, arg_tuples).get(timeout)
    pool.close()
    pool.join()
    return results
