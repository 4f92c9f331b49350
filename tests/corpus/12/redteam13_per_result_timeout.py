# mistake: gives each result its own `timeout` (f.result(timeout=timeout) in a loop) instead of one budget for all of them
# violates: waiting longer than `timeout` must raise multiprocessing.TimeoutError
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import TimeoutError as FuturesTimeout

    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    try:
        futures = [executor.submit(fn, *args) for args in arg_tuples]
        results = []
        for future in futures:
            try:
                results.append(future.result(timeout=timeout))
            except FuturesTimeout:
                raise multiprocessing.TimeoutError(f"a call took longer than {timeout} s") from None
        return results
    finally:
        for process in list(executor._processes.values()):
            process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
