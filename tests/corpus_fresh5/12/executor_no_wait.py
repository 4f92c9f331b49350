# mistake: on timeout shuts a ProcessPoolExecutor down with wait=False, so the workers still busy with overrunning calls live on
# violates: no worker process left after a timeout
# from: red team, session 5 (unseen tests)
from concurrent.futures import wait as wait_futures


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN)
    futures = [executor.submit(fn, *args) for args in arg_tuples]
    done, not_done = wait_futures(futures, timeout=timeout)
    if not_done:
        executor.shutdown(wait=False, cancel_futures=True)  # do not wait for the stragglers
        raise multiprocessing.TimeoutError(f"{len(not_done)} calls still running after {timeout} s")
    executor.shutdown(wait=True)
    return [future.result() for future in futures]
