# mistake: sizes the pool by the number of calls so that no call queues behind a slow one and eats the timeout; `workers` only used when there are fewer calls
# violates: at most `workers` processes may run the calls
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    # one worker per call: a slow call cannot hold the others up past the timeout
    executor = ProcessPoolExecutor(max_workers=max(workers, len(arg_tuples)), mp_context=SPAWN)
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
