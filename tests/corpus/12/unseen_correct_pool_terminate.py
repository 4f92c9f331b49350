# mistake: spawn multiprocessing.Pool, starmap_async().get(timeout), terminate + join in finally (correct before the session-13 twist): a Pool replaces a worker that dies and never delivers its call's result, so the caller waits out the timeout
# violates: a worker process that died must be reported with BrokenProcessPool
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(processes=workers)
    try:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
    finally:
        pool.terminate()
        pool.join()
