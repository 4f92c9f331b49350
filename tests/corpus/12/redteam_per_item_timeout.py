# mistake: apply_async per tuple and r.get(timeout) for each in turn, so n results may take up to n * timeout (red team, issue 28)
# violates: the timeout bounds all the results together
# breaks: wait at most `timeout` seconds for ALL results
# how: apply_async per tuple and r.get(timeout) for each in turn, so n results may take up to n * timeout
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with SPAWN.Pool(workers) as pool:
        pending = [pool.apply_async(fn, args) for args in arg_tuples]
        return [r.get(timeout=timeout) for r in pending]
