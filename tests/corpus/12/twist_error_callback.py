# mistake: expects starmap_async's error_callback to fire when a worker dies and waits on an Event it sets; it fires only for an exception the call raised, so a dead worker still means waiting out the timeout
# violates: a worker process that died must be reported with BrokenProcessPool
# from: exercise twist (session 13)
# breaks: if a worker process dies during a call, raise BrokenProcessPool well before timeout
import threading


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    if not arg_tuples:
        return []
    settled = threading.Event()  # set by the callback on success, by error_callback on any failure
    with SPAWN.Pool(processes=workers) as pool:
        pending = pool.starmap_async(fn, arg_tuples, callback=lambda _: settled.set(),
                                     error_callback=lambda _: settled.set())
        if not settled.wait(timeout):
            raise multiprocessing.TimeoutError(f"no results after {timeout} s")
        return pending.get(timeout)  # the results, or the failure error_callback was told of
