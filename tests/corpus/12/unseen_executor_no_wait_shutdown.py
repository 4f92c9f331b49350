# mistake: uses a spawn ProcessPoolExecutor and, on timeout, shutdown(wait=False, cancel_futures=True) so as not to hang
# violates: worker processes left behind after a failing call: leave the pool with `with`
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "leave no worker process behind, whether it returns, times out or a call raises"; "raise multiprocessing.TimeoutError"
# breaks: the worker running the overrunning call keeps running after the function has returned, and the error is concurrent.futures' TimeoutError
# how: one 4 s call with timeout 1.5: TimeoutError (not multiprocessing.TimeoutError) and a worker process still alive afterwards
import concurrent.futures as _cf
import time as _time

def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = _cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    deadline = _time.monotonic() + timeout
    futures = [pool.submit(fn, *args) for args in arg_tuples]
    try:
        results = [f.result(timeout=max(0.0, deadline - _time.monotonic())) for f in futures]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results
