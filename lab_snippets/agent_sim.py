"""Pieces for chapter 14's miniature agent task: a "harness" child process and a resource ledger.

The harness stands in for an agent command-line tool running in a sandbox. Run it as a
child process::

    python -m lab_snippets.agent_sim harness --task t1 --work 0.1            # exits 0
    python -m lab_snippets.agent_sim harness --task t2 --work 0.1 --exit-code 3
    python -m lab_snippets.agent_sim harness --task t3 --hang --max-life 5    # never finishes its work

It prints one ``started <pid>`` line at once, works for ``--work`` seconds, then prints one
JSON line with the task id and a fake diff, and exits with ``--exit-code``. With ``--hang``
it never gets to the result; it is still bounded by itself: after ``--max-life`` seconds it
exits with code ``HANG_EXIT_CODE`` whatever happens, so a parent that forgets to kill it
cannot leave it running forever.

``ResourceRegistry`` records every acquire and release of a named resource (a boot permit,
a sandbox, a child process, a session...) against ``time.monotonic()``, so a notebook can
assert that every path released everything, and in which order::

    registry = ResourceRegistry()
    registry.acquire("sandbox", "t1")
    ...
    registry.release("sandbox", "t1")
    registry.assert_no_leak()
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

HANG_EXIT_CODE = 124
MODULE = "lab_snippets.agent_sim"


def harness_command(
    task: str, work: float = 0.1, *, hang: bool = False, exit_code: int = 0, max_life: float = 5.0
) -> list[str]:
    """The argv that runs the harness child with this interpreter."""
    cmd = [
        sys.executable,
        "-m",
        MODULE,
        "harness",
        "--task",
        task,
        "--work",
        str(work),
        "--exit-code",
        str(exit_code),
        "--max-life",
        str(max_life),
    ]
    if hang:
        cmd.append("--hang")
    return cmd


def fake_diff(task: str) -> str:
    return f"--- a/{task}.py\n+++ b/{task}.py\n@@ -1 +1 @@\n-broken()\n+fixed()\n"


def harness_main(task: str, work: float, hang: bool, exit_code: int, max_life: float) -> int:
    deadline = time.monotonic() + max_life
    print(f"started {os.getpid()}", flush=True)
    if hang:
        while time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        return HANG_EXIT_CODE
    time.sleep(max(0.0, min(work, deadline - time.monotonic())))
    print(json.dumps({"task": task, "diff": fake_diff(task)}), flush=True)
    return exit_code


def parse_result(output: str) -> dict | None:
    """The harness's JSON result line from its stdout, or None when it never printed one."""
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


# -- the resource registry ---------------------------------------------------------------
@dataclass(frozen=True)
class ResourceEvent:
    at: float
    action: str  # "acquire" or "release"
    kind: str
    name: str


class ResourceRegistry:
    """A thread-safe ledger of named resources: who holds what, since when, and every change."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        on_event: Callable[[ResourceEvent], object] | None = None,
    ) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str], float] = {}
        self._now: dict[str, int] = {}
        self._peak: dict[str, int] = {}
        self.events: list[ResourceEvent] = []
        self.on_event = on_event

    def acquire(self, kind: str, name: str) -> None:
        """Record that `name` of `kind` is now held; holding the same one twice is an error."""
        with self._lock:
            key = (kind, name)
            if key in self._open:
                raise RuntimeError(f"{kind} {name!r} is already held")
            event = ResourceEvent(self._clock(), "acquire", kind, name)
            self._open[key] = event.at
            self._now[kind] = self._now.get(kind, 0) + 1
            self._peak[kind] = max(self._peak.get(kind, 0), self._now[kind])
            self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def release(self, kind: str, name: str) -> bool:
        """Record a release; idempotent: returns False (and records nothing) if it was not held."""
        with self._lock:
            key = (kind, name)
            if key not in self._open:
                return False
            del self._open[key]
            self._now[kind] -= 1
            event = ResourceEvent(self._clock(), "release", kind, name)
            self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)
        return True

    @contextmanager
    def held(self, kind: str, name: str) -> Iterator[None]:
        """Acquire for the duration of a `with` block, released on every way out."""
        self.acquire(kind, name)
        try:
            yield
        finally:
            self.release(kind, name)

    def is_open(self, kind: str, name: str) -> bool:
        with self._lock:
            return (kind, name) in self._open

    def open(self, kind: str | None = None) -> list[tuple[str, str]]:
        """What is held now (of one kind, or of every kind), oldest first."""
        with self._lock:
            items = sorted(self._open.items(), key=lambda item: item[1])
        return [key for key, _ in items if kind is None or key[0] == kind]

    def peak(self, kind: str) -> int:
        """The largest number of `kind` ever held at once."""
        with self._lock:
            return self._peak.get(kind, 0)

    def history(self, name: str) -> list[str]:
        """Every event of one name, as "acquire sandbox" / "release sandbox", in order."""
        with self._lock:
            return [f"{e.action} {e.kind}" for e in self.events if e.name == name]

    def counts_over_time(self, kinds: list[str], t0: float = 0.0) -> tuple[list[float], dict[str, list[int]]]:
        """Step data for a plot: event times (minus `t0`) and how many of each kind were held."""
        with self._lock:
            events = list(self.events)
        times: list[float] = [0.0]
        counts = {kind: [0] for kind in kinds}
        current = dict.fromkeys(kinds, 0)
        for event in events:
            if event.kind not in current:
                continue
            current[event.kind] += 1 if event.action == "acquire" else -1
            times.append(event.at - t0)
            for kind in kinds:
                counts[kind].append(current[kind])
        return times, counts

    def assert_no_leak(self) -> None:
        left = self.open()
        if left:
            raise AssertionError("still held: " + ", ".join(f"{kind} {name!r}" for kind, name in left))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("harness", help="pretend to be an agent CLI working on one task")
    h.add_argument("--task", default="task")
    h.add_argument("--work", type=float, default=0.1, help="seconds of work before the result")
    h.add_argument("--hang", action="store_true", help="never produce a result (until --max-life)")
    h.add_argument("--exit-code", type=int, default=0)
    h.add_argument("--max-life", type=float, default=5.0, help="hard bound on the child's lifetime")
    args = parser.parse_args(argv)
    return harness_main(args.task, args.work, args.hang, args.exit_code, args.max_life)


if __name__ == "__main__":
    sys.exit(main())
