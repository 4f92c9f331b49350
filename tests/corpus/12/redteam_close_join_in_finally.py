# mistake: get(timeout) on starmap_async, but the finally does pool.close(); pool.join(), which waits for the overrunning calls to finish (red team, issue 28)
# violates: overran its budget
# breaks: wait at most `timeout` seconds (and raise multiprocessing.TimeoutError), leaving no worker behind
# how: get(timeout) on starmap_async, but the finally does pool.close(); pool.join(), which waits for the overrunning calls to finish
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = SPAWN.Pool(workers)
    try:
        return pool.starmap_async(fn, arg_tuples).get(timeout=timeout)
    finally:
        pool.close()
        pool.join()
