# mistake: "adds context" by wrapping a call's exception in multiprocessing.ProcessError naming the arguments (lets BrokenProcessPool through untouched)
# violates: a worker's exception must reach the caller as it was raised
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import FIRST_EXCEPTION, wait
    from concurrent.futures.process import BrokenProcessPool

    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    try:
        futures = [executor.submit(fn, *args) for args in arg_tuples]
        done, not_done = wait(futures, timeout=timeout, return_when=FIRST_EXCEPTION)
        for args, f in zip(arg_tuples, futures):
            if f in done and f.exception() is not None:
                error = f.exception()
                if isinstance(error, BrokenProcessPool):
                    raise error
                raise multiprocessing.ProcessError(
                    f"{getattr(fn, '__name__', fn)}{args} failed: {error!r}") from error
        if not_done:
            raise multiprocessing.TimeoutError(f"no result within {timeout} s")
        return [f.result() for f in futures]
    finally:
        for process in list(executor._processes.values()):
            process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
