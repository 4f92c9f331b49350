# mistake: fixed-rate schedule against a monotonic deadline (next = previous due time + interval): after a check() that ran over several intervals the missed slots are caught up with calls back to back (filed as correct until session 5 drew a stalled call; the same mistake as fresh_fixed_rate_catch_up)
# violates: after the previous call started, sooner than the
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        next_at = time.monotonic()
        while True:
            if stop.is_set():
                return
            check()
            next_at += interval
            if stop.wait(max(0.0, next_at - time.monotonic())):
                return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
