# mistake: runs each distinct argument tuple once and hands the same result to its duplicates
# violates: the calls ran one at a time: two workers must run calls at the same time
# from: written by the helper who wrote the generators (issue 37)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    distinct = list(dict.fromkeys(arg_tuples))
    with SPAWN.Pool(processes=workers) as pool:
        results = dict(zip(distinct, pool.starmap_async(fn, distinct).get(timeout)))
    return [results[args] for args in arg_tuples]
