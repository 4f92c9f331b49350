# mistake: sleeps the full interval with time.sleep and looks at the event only between sleeps
# violates: slow to stop
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "ends promptly when stop is set, even in the middle of an interval"
# breaks: the thread lives on for up to a whole interval after stop is set
# how: interval 2 s, stop set 0.1 s in: join(timeout=0.5) returns with the thread still alive
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            time.sleep(interval)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
