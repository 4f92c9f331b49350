# mistake: uses multiprocessing.Pool() with the platform default start method
# violates: the workers were not started with spawn: take the pool from the spawn context
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "on a spawn pool of workers processes" ("the calls run in spawn worker processes")
# breaks: on Linux the workers are forked, not spawned (they inherit the parent's state)
# how: a worker reporting multiprocessing.get_start_method() / a module global changed in the parent shows fork semantics
def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    pool = multiprocessing.Pool(processes=workers)
    try:
        return pool.starmap_async(fn, arg_tuples).get(timeout)
    finally:
        pool.terminate()
        pool.join()
