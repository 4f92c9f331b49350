# mistake: stop() sets the event and returns without joining; the thread sleeps out its interval with time.sleep and is still running after stop()
# violates: left running after
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines, self.ping, self.get, self.kill = dict(engines), ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HealthMonitor")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, engine in list(self.engines.items()):
                if self._stop.is_set():
                    return
                try:
                    self.get(self.ping(engine), self.timeout)
                except Exception:  # a timeout or a failed call: the engine is not healthy
                    del self.engines[name]
                    self.killed.append(name)
                    self.kill(engine)
            time.sleep(self.interval)
