# mistake: builds the pool with multiprocessing.Pool, the platform's default start method (fork on Linux up to 3.13), so the workers are forked copies of the parent instead of spawned interpreters
# violates: the calls run in `spawn` worker processes
# from: red team, session 4 (unseen tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    if not arg_tuples:
        return []
    with multiprocessing.Pool(processes=workers) as pool:
        pending = pool.starmap_async(fn, arg_tuples, chunksize=1)
        return pending.get(timeout=timeout)
