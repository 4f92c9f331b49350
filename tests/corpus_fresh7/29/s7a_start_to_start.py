# mistake: paces rounds like a metronome (next round at start + interval), so slow checks squeeze the pause
# violates: rounds -- "a wait of interval from the end of one round to the start of the next, not start to start"
# from: red team, session 7 (unseen tests)
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines = dict(engines)
        self.ping, self.get, self.kill = ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list = []
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HealthMonitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        next_round = time.monotonic()
        while not self._stop.is_set():
            for name, handle in list(self.engines.items()):
                if self._stop.is_set():
                    return
                if name in self.killed:
                    continue
                try:
                    self.get(self.ping(handle), self.timeout)
                except Exception:
                    self.killed.append(name)
                    self.kill(handle)
            next_round += self.interval
            self._stop.wait(max(0.0, next_round - time.monotonic()))
