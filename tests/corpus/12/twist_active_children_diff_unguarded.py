# mistake: finds its own workers by comparing active_children() before and after starting the pool, with nothing to stop a second caller's pool starting in between
# violates: another caller's processes were touched
# from: the lead, session 13 (the reference had this race until a reader who had not seen the tests pointed at it)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    import time
    from concurrent.futures.process import BrokenProcessPool

    deadline = time.monotonic() + timeout
    # A Pool starts its workers at once and silently replaces one that dies: the dead worker's
    # call never returns. So note the first workers and watch them while waiting.
    if True:
        before = set(multiprocessing.active_children())
        pool = SPAWN.Pool(processes=workers)
        started = [p for p in multiprocessing.active_children() if p not in before]
    with pool:
        pending = pool.starmap_async(fn, arg_tuples)
        while not pending.ready():
            if any(p.exitcode is not None for p in started):
                raise BrokenProcessPool("a worker process died before its call returned")
            left = deadline - time.monotonic()
            if left <= 0:
                raise multiprocessing.TimeoutError(f"no results after {timeout} s")
            pending.wait(min(left, 0.05))
        return pending.get(0)
