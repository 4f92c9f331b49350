# mistake: manages the Pool by hand: terminate() on a timeout, close()/join() after the results, but on a dead worker it only raises, never terminating the pool
# violates: left behind after the call raised BrokenProcessPool
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    import time
    from concurrent.futures.process import BrokenProcessPool

    deadline = time.monotonic() + timeout
    pool = SPAWN.Pool(processes=workers)
    started = list(pool._pool)
    result = pool.starmap_async(fn, arg_tuples, chunksize=1)
    while not result.ready():
        if any(p.exitcode is not None for p in started):
            raise BrokenProcessPool("a worker process died during a call")
        left = deadline - time.monotonic()
        if left <= 0:
            pool.terminate()
            raise multiprocessing.TimeoutError(f"no result within {timeout} s")
        result.wait(min(left, 0.05))
    pool.close()
    pool.join()
    return result.get()
