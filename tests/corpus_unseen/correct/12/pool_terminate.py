# correct: spawn multiprocessing.Pool, starmap_async().get(timeout); terminate + join in finally
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(processes=workers)
    try:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
    finally:
        pool.terminate()
        pool.join()
