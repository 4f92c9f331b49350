# mistake: uses multiprocessing's ThreadPool, so the calls run as threads of the kernel's process
# violates: ran in the kernel's own process
from multiprocessing.pool import ThreadPool


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with ThreadPool(processes=workers) as pool:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
