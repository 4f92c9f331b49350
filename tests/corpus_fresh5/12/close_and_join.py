# mistake: shuts the pool down with close() and join() in a finally, which waits for the overrunning calls after a timeout
# violates: TimeoutError comes back once timeout has passed, not after the overrunning calls end
# from: red team, session 5 (unseen tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = SPAWN.Pool(processes=workers)
    try:
        return pool.starmap_async(fn, arg_tuples).get(timeout=timeout)
    finally:
        pool.close()  # a clean shutdown: let the workers exit on their own
        pool.join()
