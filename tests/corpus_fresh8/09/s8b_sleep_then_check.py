# mistake: sleeps the full interval with time.sleep and only then looks at stop
# violates: stop -- "the thread ends within half a second of `stop` being set ... however long the interval"
# from: red team, session 8 (unseen tests)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            time.sleep(interval)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
