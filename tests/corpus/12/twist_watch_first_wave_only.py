# mistake: watches only the workers' pids it saw when the batch began, through the pool's task count: it polls whether the batch has finished its first wave of calls, and stops watching after the first wave, so a worker that dies on a later call goes unnoticed
# violates: must be reported with BrokenProcessPool || must raise BrokenProcessPool || another caller's processes were touched
# from: exercise twist (session 13)
# how: it finds its workers by an active_children() diff, so two callers started together may also take each other's workers (session 13's two-caller check)
# breaks: a worker that dies after its first call returned (1 worker, the 2nd call dies)
import time as _time
from concurrent.futures.process import BrokenProcessPool


def parallel_starmap(fn, arg_tuples: list[tuple], workers: int, timeout: float) -> list:
    """Run fn(*args) for each tuple on a spawn pool of `workers`; results in input order."""
    deadline = _time.monotonic() + timeout
    before = set(multiprocessing.active_children())
    with SPAWN.Pool(processes=workers) as pool:
        mine = [p for p in multiprocessing.active_children() if p not in before]
        # one call per worker first: a death shows at once; the rest run with a plain bounded get
        first = [pool.apply_async(fn, args) for args in arg_tuples[:workers]]
        for result in first:
            while not result.ready():
                if any(p.exitcode is not None for p in mine):
                    raise BrokenProcessPool("a worker process died")
                if _time.monotonic() >= deadline:
                    raise multiprocessing.TimeoutError(f"no results after {timeout} s")
                result.wait(0.05)
        rest = pool.starmap_async(fn, arg_tuples[workers:])
        return [r.get(0) for r in first] + rest.get(max(0.0, deadline - _time.monotonic()))
