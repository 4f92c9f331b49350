# mistake: a spawn ProcessPoolExecutor waited with wait(FIRST_EXCEPTION, timeout), then kills every child that was not there before it started: a second caller's workers, started at the same moment, are among them
# violates: another caller's processes were touched
# breaks: was graded correct until the contract said two threads may call at once (session 13)
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
