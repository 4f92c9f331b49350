# mistake: wakes up on stop and calls check() once more before the loop condition is tested
# violates: called again after stop was set
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        check()
        while not stop.is_set():
            stop.wait(interval)
            check()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t
