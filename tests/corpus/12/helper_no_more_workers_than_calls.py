# mistake: starts min(workers, len(arg_tuples)) workers, so no calls means Pool(0)
# violates: every call returned, but parallel_starmap raised
# from: written by the helper who wrote the generators (issue 37)
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    with SPAWN.Pool(processes=min(workers, len(arg_tuples))) as pool:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
