# mistake: uses Executor.map(fn, *zip(*arg_tuples), timeout=...) to spread the tuples, which turns tuples of no arguments into no calls at all
# violates: a tuple of no arguments is a call too
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import TimeoutError as FuturesTimeout

    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    try:
        # map's timeout counts from this call, for all the results together
        return list(executor.map(fn, *zip(*arg_tuples), timeout=timeout))
    except FuturesTimeout:
        raise multiprocessing.TimeoutError(f"no result within {timeout} s") from None
    finally:
        for process in list(executor._processes.values()):
            process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
