# mistake: collects the results with as_completed, so they come back in the order the calls finish
# violates: in the order of the inputs, not in the order the calls finish
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN) as pool:
        futures = [pool.submit(fn, *args) for args in arg_tuples]
        return [f.result() for f in as_completed(futures, timeout=timeout)]
