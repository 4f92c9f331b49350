# correct: a spawn ProcessPoolExecutor (it raises BrokenProcessPool itself when a worker dies), wait(FIRST_EXCEPTION, timeout) for all the futures; in a finally it kills the processes the executor started (the children that were not there before, as the chapter's subprocess check counts them) and then shuts it down, since Python 3.11 has no kill_workers()
# from: exercise twist (session 13)
from concurrent.futures import FIRST_EXCEPTION, wait


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    before = set(multiprocessing.active_children())
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    try:
        futures = [executor.submit(fn, *args) for args in arg_tuples]
        done, not_done = wait(futures, timeout=timeout, return_when=FIRST_EXCEPTION)
        for future in futures:
            if future in done and future.exception() is not None:
                raise future.exception()
        if not_done:
            raise multiprocessing.TimeoutError(f"no results after {timeout} s")
        return [future.result() for future in futures]
    finally:
        for process in multiprocessing.active_children():
            if process not in before:
                process.kill()
        executor.shutdown(wait=True, cancel_futures=True)
