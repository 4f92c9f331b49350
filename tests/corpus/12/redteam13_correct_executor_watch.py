# correct: a ProcessPoolExecutor, but it does not rely on the executor alone to notice a dead worker (3.11's manager thread can miss a worker spawned while it waits): it waits in 50 ms steps, checks the executor's worker processes for an exit code itself, and kills and joins them on every way out
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    import time
    from concurrent.futures import FIRST_EXCEPTION, wait
    from concurrent.futures.process import BrokenProcessPool

    deadline = time.monotonic() + timeout
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    try:
        futures = [executor.submit(fn, *args) for args in arg_tuples]
        processes = list(executor._processes.values())  # every submit has started its worker
        while True:
            left = deadline - time.monotonic()
            done, not_done = wait(futures, timeout=max(0, min(left, 0.05)),
                                  return_when=FIRST_EXCEPTION)
            for future in done:
                if future.exception() is not None:
                    raise future.exception()  # a call's own error, or BrokenProcessPool
            if not not_done:
                return [future.result() for future in futures]
            if any(p.exitcode is not None for p in processes):
                raise BrokenProcessPool("a worker process died during a call")
            if left <= 0:
                raise multiprocessing.TimeoutError(f"no result within {timeout} s")
    finally:
        for p in list(executor._processes.values()):
            p.kill()
        executor.shutdown(wait=True, cancel_futures=True)
