# mistake: looks at the stop event only between rounds, so stop() waits for a whole round of checks
# violates: it waited for the rest of the round's checks
# from: red team, session 7 (unseen tests); accepted on its first run, closed in session 8 by a stop during a round of three stuck engines
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
        while True:
            for name, handle in list(self.engines.items()):
                if name in self.killed:
                    continue
                try:
                    self.get(self.ping(handle), self.timeout)
                except Exception:
                    self.killed.append(name)
                    self.kill(handle)
            if self._stop.wait(self.interval):
                return
