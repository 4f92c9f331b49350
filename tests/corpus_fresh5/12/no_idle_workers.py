# mistake: sizes the pool as min(workers, len(arg_tuples)) to avoid idle workers, so no tuples asks for a pool of 0
# violates: no tuples give [] (here: ValueError from Pool(processes=0))
# from: red team, session 5 (unseen tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    size = min(workers, len(arg_tuples))  # no idle workers
    with SPAWN.Pool(processes=size) as pool:
        return pool.starmap_async(fn, arg_tuples).get(timeout=timeout)
