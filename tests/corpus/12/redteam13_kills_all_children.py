# mistake: cleans up by killing every child of the current process (psutil.Process().children()), not just this pool's workers
# violates: another caller's processes were touched
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
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
        # whatever happened, nothing we started may survive
        for child in psutil.Process().children(recursive=True):
            try:
                if "resource_tracker" not in " ".join(child.cmdline()):
                    child.kill()
            except psutil.Error:  # already gone
                pass
        executor.shutdown(wait=True, cancel_futures=True)
