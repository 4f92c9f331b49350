# mistake: kept the chapter's Pool.starmap_async(...).get(timeout) and looks for a dead worker only after get() has timed out
# violates: must be reported with BrokenProcessPool well before
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures.process import BrokenProcessPool

    with SPAWN.Pool(processes=workers) as pool:
        started_pids = {p.pid for p in pool._pool}
        result = pool.starmap_async(fn, arg_tuples)
        try:
            return result.get(timeout)
        except multiprocessing.TimeoutError:
            # a pool replaces a worker that died: a new pid means one of ours is gone
            if {p.pid for p in pool._pool} != started_pids:
                raise BrokenProcessPool("a worker process died") from None
            raise
