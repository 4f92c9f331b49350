# mistake: calls the blocking starmap, which has no timeout, so a slow call holds the caller
# violates: must raise multiprocessing.TimeoutError
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with SPAWN.Pool(processes=workers) as pool:
        return pool.starmap(fn, arg_tuples)
