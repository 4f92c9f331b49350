# mistake: keeps a fixed schedule (start + k*interval), so after a slow call the missed ticks fire back to back
# violates: rhythm -- "never sooner than `interval` after the previous call started ... (the calls missed during a stall are not caught up)"
# from: red team, session 8 (unseen tests)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        next_at = time.monotonic()
        while not stop.is_set():
            check()
            next_at += interval  # no drift over a long run
            if stop.wait(max(0.0, next_at - time.monotonic())):
                break
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
