# mistake: closes the pool in a finally but never terminates or joins it, so workers outlive the call
# violates: worker processes left behind
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = SPAWN.Pool(processes=workers)
    try:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
    finally:
        pool.close()
