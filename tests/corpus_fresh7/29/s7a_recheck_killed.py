# mistake: records a killed engine but keeps checking it each round, so it is killed (and listed) again and again
# violates: once -- "a killed engine is killed only once, named in self.killed, and not checked after"
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
        while not self._stop.is_set():
            for name, handle in self.engines.items():
                if self._stop.is_set():
                    return
                try:
                    self.get(self.ping(handle), self.timeout)
                except Exception:
                    self.killed.append(name)
                    self.kill(handle)
            self._stop.wait(self.interval)
