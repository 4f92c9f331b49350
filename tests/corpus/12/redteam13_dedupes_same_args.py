# mistake: "optimises" by running each distinct argument tuple once and copying its result to the repeats
# violates: the calls ran one at a time
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    unique = list(dict.fromkeys(arg_tuples))  # same arguments, same answer: compute once
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    try:
        futures = {args: executor.submit(fn, *args) for args in unique}
        done, not_done = wait(futures.values(), timeout=timeout, return_when=FIRST_EXCEPTION)
        for f in done:
            if f.exception() is not None:
                raise f.exception()
        if not_done:
            raise multiprocessing.TimeoutError(f"no result within {timeout} s")
        return [futures[args].result() for args in arg_tuples]
    finally:
        for process in list(executor._processes.values()):
            process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
