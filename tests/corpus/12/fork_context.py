# mistake: takes the pool from the fork context (copies the kernel) where spawn is required
# violates: not started with spawn
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    # fork starts faster and can run functions defined anywhere
    with multiprocessing.get_context("fork").Pool(processes=workers) as pool:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
