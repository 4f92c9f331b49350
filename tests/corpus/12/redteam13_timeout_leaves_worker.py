# mistake: on a timeout stops the pool with kill_workers() where it exists (3.14) and otherwise with shutdown(wait=False, cancel_futures=True), which lets the running call go on
# violates: worker processes left behind after a timeout
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    futures = [executor.submit(fn, *args) for args in arg_tuples]
    done, not_done = wait(futures, timeout=timeout, return_when=FIRST_EXCEPTION)
    if not_done and all(f.exception() is None for f in done):
        # don't wait for the overrunning calls: come back now
        if hasattr(executor, "kill_workers"):  # Python 3.14+
            executor.kill_workers()
        else:
            executor.shutdown(wait=False, cancel_futures=True)
        raise multiprocessing.TimeoutError(f"{len(not_done)} calls still running after {timeout} s")
    try:
        for f in done:
            if f.exception() is not None:
                raise f.exception()
        return [f.result() for f in futures]
    finally:
        for process in list(executor._processes.values()):
            process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
