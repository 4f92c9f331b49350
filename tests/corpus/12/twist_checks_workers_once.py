# mistake: checks once, before waiting, that every worker of the pool is alive, then waits with get(timeout); a worker that dies during the wait goes unnoticed
# violates: a worker process that died must be reported with BrokenProcessPool
# from: exercise twist (session 13)
# breaks: if a worker process dies during a call, raise BrokenProcessPool well before timeout
from concurrent.futures.process import BrokenProcessPool


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    before = set(multiprocessing.active_children())
    with SPAWN.Pool(processes=workers) as pool:
        mine = [p for p in multiprocessing.active_children() if p not in before]
        pending = pool.starmap_async(fn, arg_tuples)
        if any(not p.is_alive() for p in mine):
            raise BrokenProcessPool("a worker process died")
        return pending.get(timeout)
