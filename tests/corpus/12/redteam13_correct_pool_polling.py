# correct: keeps the chapter's SPAWN.Pool but submits each tuple with apply_async and polls every 50 ms: a failed call is raised at once, and a worker of the pool's own with an exit code means one died (a Pool silently replaces dead workers, so nobody else would say so); `with` terminates and joins the workers on every way out
# from: red team of session 13 (had not seen the tests)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    import time
    from concurrent.futures.process import BrokenProcessPool

    deadline = time.monotonic() + timeout
    with SPAWN.Pool(processes=workers) as pool:
        started = list(pool._pool)  # the workers the pool started; a replacement is a new object
        pending = [pool.apply_async(fn, args) for args in arg_tuples]
        while True:
            for result in pending:
                if result.ready() and not result.successful():
                    result.get()  # raises the call's own exception
            if all(result.ready() for result in pending):
                return [result.get() for result in pending]
            if any(p.exitcode is not None for p in started):
                raise BrokenProcessPool("a worker process died during a call")
            left = deadline - time.monotonic()
            if left <= 0:
                raise multiprocessing.TimeoutError(f"no result within {timeout} s")
            time.sleep(min(left, 0.05))
