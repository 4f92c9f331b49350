# mistake: waits one interval before the first call
# violates: check() must run right away
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.wait(interval):
            check()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t
