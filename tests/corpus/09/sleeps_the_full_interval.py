# mistake: sleeps the whole interval with time.sleep, so stop is noticed only at the next tick
# violates: still running 1.5 s after stop was set
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            time.sleep(interval)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t
