"""A loopback HTTP/1.1 server of known latency that counts what is in flight, and a virtual clock.

Chapter 25 measures the caps that client libraries put on concurrency. For that it needs a
server whose answer time is known and which says, at every instant, how many requests it is
handling and how many connections are open::

    from lab_snippets.loopback_http import LatencyServer

    async with LatencyServer(latency=0.02) as server:
        async with httpx.AsyncClient() as client:
            await client.get(server.url)
    print(server.requests.peak, server.connections.entered)

``LatencyServer`` listens on 127.0.0.1 on a port the system picks, answers every request with
``200 OK`` after ``latency`` seconds (changeable while it runs; with ``hold`` set to an
``asyncio.Event``, also not before the event is set), keeps connections alive as
HTTP/1.1 does, and on exit closes its listener and every connection and waits for its handlers
(bounded). ``requests`` and ``connections`` are `InFlight` counters; ``in_flight_average``
gives the time-averaged number of requests inside the server over a window, the L of Little's
law.

``VirtualClock`` is a clock for tests of code that paces itself with ``sleep``: virtual time
jumps straight to the next wake-up once every task is waiting, so a test of a rate limiter is
exact and instant::

    clock = VirtualClock()
    result = await clock.drive(limiter_test(clock.time, clock.sleep))
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable
from typing import Any

from lab_snippets.asyncio_tools import InFlight

__all__ = ["LatencyServer", "VirtualClock"]

HOST = "127.0.0.1"
_MAX_HEADER = 16 * 1024


class LatencyServer:
    """An HTTP/1.1 server on 127.0.0.1 that answers every request after ``latency`` seconds.

    Attributes: ``requests`` and ``connections`` (`InFlight`: now, peak, entered); ``spans``,
    one ``(start, end)`` pair of ``time.monotonic()`` readings per answered request; ``url``.
    """

    def __init__(self, latency: float = 0.02, *, idle_timeout: float = 5.0, lifetime: float = 30.0,
                 body: bytes = b"ok", hold: asyncio.Event | None = None) -> None:
        if latency < 0:
            raise ValueError("latency must be >= 0")
        self.latency = latency
        self.idle_timeout = idle_timeout
        self.lifetime = lifetime
        self.body = body
        self.hold = hold  # when set to an Event, every answer also waits for it (bounded by lifetime)
        self.host = HOST
        self.port = 0
        self.requests = InFlight()
        self.connections = InFlight()
        self.spans: list[tuple[float, float]] = []
        self._changes: list[tuple[float, int]] = []  # (time, requests in flight right after)
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._watchdog: asyncio.Task | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    # -- lifecycle --------------------------------------------------------------------
    async def start(self) -> LatencyServer:
        self._server = await asyncio.start_server(self._handle, HOST, 0, limit=_MAX_HEADER)
        self.port = self._server.sockets[0].getsockname()[1]
        self._watchdog = asyncio.create_task(self._close_after_lifetime(), name="latency-server-lifetime")
        return self

    async def close(self, timeout: float = 2.0) -> None:
        """Stop accepting, close every connection, wait (bounded) for the handlers and the listener."""
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()
        for writer in list(self._writers):
            writer.close()
        handlers = list(self._handlers)
        if handlers:
            _, still = await asyncio.wait(handlers, timeout=min(0.1, timeout / 2))
            for task in still:  # sleeping out a latency: stop it
                task.cancel()
            if still:
                await asyncio.wait(still, timeout=timeout / 2)
        try:
            await asyncio.wait_for(server.wait_closed(), timeout)
        except TimeoutError:
            pass
        if self._watchdog is not None and self._watchdog is not asyncio.current_task():
            self._watchdog.cancel()
            await asyncio.gather(self._watchdog, return_exceptions=True)

    async def __aenter__(self) -> LatencyServer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _close_after_lifetime(self) -> None:
        await asyncio.sleep(self.lifetime)
        self._watchdog = None
        await self.close()

    # -- what it saw ------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the counts and spans (between two runs against the same server)."""
        self.requests = InFlight()
        self.connections = InFlight()
        self.connections.now = len(self._writers)
        self.spans = []
        self._changes = []

    def in_flight_average(self, start: float, end: float) -> float:
        """Time-averaged number of requests inside the server between two ``time.monotonic()`` readings."""
        if end <= start:
            raise ValueError("the window must have a positive length")
        area = 0.0
        level = 0
        last = start
        for at, now in self._changes:
            if at <= start:
                level = now
                continue
            if at >= end:
                break
            area += level * (at - last)
            level, last = now, at
        area += level * (end - last)
        return area / (end - start)

    # -- serving ----------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._handlers.add(task)
        self._writers.add(writer)
        try:
            with self.connections:
                await self._serve(reader, writer)
        except asyncio.CancelledError:
            pass  # only close() cancels a handler; end the connection's task quietly
        except (ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                TimeoutError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            except (TimeoutError, ConnectionError, OSError, asyncio.CancelledError):
                pass
            self._handlers.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.idle_timeout)
            except asyncio.IncompleteReadError:
                return  # the client hung up between requests
            lines = head.decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0") or 0)
            if length:
                await asyncio.wait_for(reader.readexactly(length), self.idle_timeout)
            start = time.monotonic()
            with self.requests:
                self._changes.append((start, self.requests.now))
                try:
                    await asyncio.sleep(self.latency)
                    if self.hold is not None:
                        await asyncio.wait_for(self.hold.wait(), self.lifetime)
                finally:
                    end = time.monotonic()
                    self._changes.append((end, self.requests.now - 1))
            self.spans.append((start, end))
            closing = headers.get("connection", "").lower() == "close"
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                + b"Content-Length: %d\r\n" % len(self.body)
                + (b"Connection: close\r\n" if closing else b"")
                + b"\r\n" + self.body
            )
            await writer.drain()
            if closing:
                return


class VirtualClock:
    """Virtual time for code that takes a ``clock`` and a ``sleep``: it jumps to the next wake-up.

    ``time()`` reads the virtual clock (it starts at ``start``); ``await sleep(dt)`` waits until
    the virtual clock has advanced by ``dt``. ``drive(awaitable)`` runs the awaitable; whenever
    every other task has had its turn and some task sleeps, time jumps to the earliest
    wake-up. The real time this takes is bounded by ``real_timeout``; ``sleeps`` counts calls.
    """

    def __init__(self, start: float = 0.0, settle_turns: int = 30) -> None:
        self._now = float(start)
        self._sleepers: list[tuple[float, int, asyncio.Future]] = []
        self._seq = itertools.count()
        self.settle_turns = settle_turns
        self.sleeps = 0

    def time(self) -> float:
        return self._now

    async def sleep(self, delay: float) -> None:
        self.sleeps += 1
        if delay <= 0:
            await asyncio.sleep(0)
            return
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + delay, next(self._seq), future))
        await future

    async def drive(self, awaitable: Awaitable[Any], real_timeout: float = 5.0,
                    max_jumps: int = 100_000) -> Any:
        """Run ``awaitable`` to its end in virtual time; raise TimeoutError past ``real_timeout``."""
        task = asyncio.ensure_future(awaitable)
        deadline = time.monotonic() + real_timeout
        try:
            for _ in range(max_jumps):
                for _ in range(self.settle_turns):
                    if task.done():
                        return task.result()
                    await asyncio.sleep(0)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"still running after {real_timeout} s of real time")
                live = [s for s in self._sleepers if not s[2].done()]
                if not live:
                    await asyncio.sleep(0.001)  # waiting on something that is not our clock
                    continue
                heapq.heapify(live)
                self._sleepers = live
                wake_at = live[0][0]
                self._now = max(self._now, wake_at)
                while self._sleepers and self._sleepers[0][0] <= self._now:
                    _, _, future = heapq.heappop(self._sleepers)
                    if not future.done():
                        future.set_result(None)
            raise TimeoutError(f"more than {max_jumps} jumps of virtual time")
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task], timeout=1.0)
            for _, _, future in self._sleepers:
                future.cancel()
            self._sleepers = []
