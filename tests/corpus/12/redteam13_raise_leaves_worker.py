# mistake: kills the workers on a timeout, but when a call raises it re-raises at once after shutdown(wait=False), so the other calls keep running
# violates: worker processes left behind after a failing call || worker processes left behind after a worker died
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    futures = [executor.submit(fn, *args) for args in arg_tuples]
    done, not_done = wait(futures, timeout=timeout, return_when=FIRST_EXCEPTION)
    for f in done:
        if f.exception() is not None:
            executor.shutdown(wait=False, cancel_futures=True)
            raise f.exception()
    if not_done:
        for process in list(executor._processes.values()):
            process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
        raise multiprocessing.TimeoutError(f"no result within {timeout} s")
    executor.shutdown(wait=True)
    return [f.result() for f in futures]
