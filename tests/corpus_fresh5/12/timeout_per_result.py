# mistake: gives each result its own timeout in turn (r.get(timeout) per call), so the total wait can reach n * timeout
# violates: the timeout counts for all the results together
# from: red team, session 5 (unseen tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with SPAWN.Pool(processes=workers) as pool:
        pending = [pool.apply_async(fn, args) for args in arg_tuples]
        return [result.get(timeout=timeout) for result in pending]
