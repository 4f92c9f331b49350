# mistake: uses ProcessPoolExecutor(max_workers=workers) without mp_context, so the platform default start method is used (fork on Linux up to 3.13, forkserver on 3.14)
# violates: the workers were not started with spawn
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    executor = ProcessPoolExecutor(max_workers=workers)
    try:
        futures = [executor.submit(fn, *args) for args in arg_tuples]
        done, not_done = wait(futures, timeout=timeout, return_when=FIRST_EXCEPTION)
        for f in done:
            if f.exception() is not None:
                raise f.exception()
        if not_done:
            raise multiprocessing.TimeoutError(f"no result within {timeout} s")
        return [f.result() for f in futures]
    finally:
        for process in list(executor._processes.values()):
            process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
