# mistake: uses multiprocessing.Pool, the platform's default start method (fork on Linux before 3.14), not a spawn pool
# violates: the calls run in spawn worker processes
# from: red team, session 5 (unseen tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with multiprocessing.Pool(processes=workers) as pool:
        return pool.starmap_async(fn, arg_tuples).get(timeout=timeout)
