# mistake: one apply_async per tuple, each .get() given the time left until a single deadline, pool in with (correct before the session-13 twist): a Pool replaces a worker that dies and never delivers its call's result, so the caller waits out the timeout
# violates: a worker process that died must be reported with BrokenProcessPool
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
import time as _time

def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    deadline = _time.monotonic() + timeout
    pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        with pool:
            pending = [pool.apply_async(fn, args) for args in arg_tuples]
            return [p.get(max(0.0, deadline - _time.monotonic())) for p in pending]
    finally:
        pool.join()
