# mistake: copies the chapter's count_primes cell (a spawn Pool in with, starmap_async(...).get(timeout)); the Pool replaces a worker that dies and never delivers its call's result, so the caller waits out the whole timeout
# violates: a worker process that died must be reported with BrokenProcessPool
# from: exercise twist (session 13): what a learner who copied the page writes first
# breaks: if a worker process dies during a call, raise BrokenProcessPool well before timeout
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with SPAWN.Pool(processes=workers) as pool:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
