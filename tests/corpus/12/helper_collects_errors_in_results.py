# mistake: puts a failing call's exception in its place in the results instead of raising it
# violates: must reach the caller
# from: written by the helper who wrote the generators (issue 37)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    import time

    deadline = time.monotonic() + timeout
    with SPAWN.Pool(processes=workers) as pool:
        pending = [pool.apply_async(fn, args) for args in arg_tuples]
        out = []
        for r in pending:
            try:
                out.append(r.get(max(0, deadline - time.monotonic())))
            except multiprocessing.TimeoutError:
                raise
            except Exception as exc:
                out.append(exc)
        return out
