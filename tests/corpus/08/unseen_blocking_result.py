# mistake: submits to the pool and waits with the blocking Future.result(timeout)
# violates: the event loop was blocked while waiting for the thread to finish: await the future
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "run work(stop_event) on pool without blocking the loop"
# breaks: the event loop is frozen for the whole call (other tasks stall; cancellation cannot even be delivered)
# how: a 2 ms heartbeat task sees a gap as long as the work (~0.1 s)
import concurrent.futures

async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    stop = threading.Event()
    cfut = pool.submit(work, stop)
    try:
        return cfut.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        stop.set()
        concurrent.futures.wait([cfut])
        raise TimeoutError("deadline passed") from None
