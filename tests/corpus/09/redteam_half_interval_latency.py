# mistake: sleeps each interval as two time.sleep(interval / 2) halves and looks at stop only between them (red team, issue 28)
# violates: slow to stop
# breaks: ends promptly when stop is set (stop latency up to half an interval)
# how: sleeps each interval as two time.sleep(interval / 2) halves and looks at stop only between them
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            for _ in range(2):
                time.sleep(interval / 2)
                if stop.is_set():
                    return

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread
