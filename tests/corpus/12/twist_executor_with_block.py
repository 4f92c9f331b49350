# mistake: switches to a spawn ProcessPoolExecutor (it raises BrokenProcessPool) inside with and waits with FIRST_EXCEPTION and the timeout, but leaving the with block waits for the calls still running, so a timeout returns only after the overrunning calls end
# violates: overran its budget
# from: exercise twist (session 13): the page's ProcessPoolExecutor cell, bounded like its Pool cell
# breaks: wait at most `timeout` seconds, leaving no worker behind (the executor's with has no terminate)
from concurrent.futures import FIRST_EXCEPTION, wait


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    with ProcessPoolExecutor(max_workers=workers, mp_context=SPAWN) as executor:
        futures = [executor.submit(fn, *args) for args in arg_tuples]
        done, not_done = wait(futures, timeout=timeout, return_when=FIRST_EXCEPTION)
        for future in futures:
            if future in done and future.exception() is not None:
                raise future.exception()
        if not_done:
            for future in not_done:
                future.cancel()
            raise multiprocessing.TimeoutError(f"no results after {timeout} s")
        return [future.result() for future in futures]
