# mistake: watches the pool's first workers while waiting, as it should, but reports a death with RuntimeError("worker died") instead of BrokenProcessPool, so the caller cannot tell it from an exception a call raised
# violates: must be reported with BrokenProcessPool || must raise BrokenProcessPool || another caller's processes were touched
# from: exercise twist (session 13)
# how: it finds its workers by an active_children() diff, so two callers started together may also take each other's workers (session 13's two-caller check)
# breaks: raise BrokenProcessPool (the named exception) when a worker dies
import time as _time


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    deadline = _time.monotonic() + timeout
    before = set(multiprocessing.active_children())
    with SPAWN.Pool(processes=workers) as pool:
        mine = [p for p in multiprocessing.active_children() if p not in before]
        pending = pool.starmap_async(fn, arg_tuples)
        while not pending.ready():
            if any(p.exitcode is not None for p in mine):
                raise RuntimeError("a worker process died")
            if _time.monotonic() >= deadline:
                raise multiprocessing.TimeoutError(f"no results after {timeout} s")
            pending.wait(min(0.05, max(0.0, deadline - _time.monotonic())))
        return pending.get(0)
