# mistake: submits each distinct argument tuple once and reuses its result for repeats
# violates: one call per tuple: the same arguments twice are two calls
# from: red team, session 5 (unseen tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    distinct = list(dict.fromkeys(arg_tuples))  # no need to compute the same thing twice
    with SPAWN.Pool(processes=workers) as pool:
        results = pool.starmap_async(fn, distinct).get(timeout=timeout)
    by_args = dict(zip(distinct, results))
    return [by_args[args] for args in arg_tuples]
