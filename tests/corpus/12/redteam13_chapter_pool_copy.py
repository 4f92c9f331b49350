# mistake: hands in the chapter's own solution, SPAWN.Pool + starmap_async(...).get(timeout), without the new dead-worker requirement
# violates: must raise BrokenProcessPool || must be reported with BrokenProcessPool
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with SPAWN.Pool(processes=workers) as pool:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
