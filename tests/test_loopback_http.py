"""Tests for lab_snippets.loopback_http: the latency server and the virtual clock."""

from __future__ import annotations

import asyncio
import time

import psutil
import pytest

from lab_snippets.loopback_http import LatencyServer, VirtualClock


def run(coro, timeout=10):
    async def bounded():
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


async def get(server: LatencyServer, count: int = 1, close: bool = False) -> list[bytes]:
    """Send ``count`` requests on one connection, one after the other; return the bodies."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    bodies = []
    try:
        for i in range(count):
            last = close and i == count - 1
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n" + (b"Connection: close\r\n" if last else b"")
                         + b"\r\n")
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            bodies.append(await reader.readexactly(length))
        return bodies
    finally:
        writer.close()
        await writer.wait_closed()


def inet_connections() -> int:
    return len([c for c in psutil.Process().net_connections("inet") if c.status != psutil.CONN_NONE])


def test_answers_and_keeps_the_connection_alive():
    async def body():
        async with LatencyServer(latency=0.01) as server:
            bodies = await get(server, count=3)
            await asyncio.sleep(0.02)
            return bodies, server.requests.entered, server.connections.entered, len(server.spans)

    assert run(body()) == ([b"ok"] * 3, 3, 1, 3)


def test_counts_requests_in_flight_at_once():
    async def body():
        async with LatencyServer(latency=0.1) as server:
            await asyncio.gather(*(get(server) for _ in range(5)))
            return server.requests.peak, server.connections.peak

    assert run(body()) == (5, 5)


def test_in_flight_average_is_the_time_average():
    async def body():
        async with LatencyServer(latency=0.05) as server:
            t0 = time.monotonic()
            await asyncio.gather(get(server), get(server))
            t1 = time.monotonic()
            return server.in_flight_average(t0, t1), server.in_flight_average(t1, t1 + 1)

    busy, idle = run(body())
    assert 1.0 < busy <= 2.0
    assert idle == 0.0


def test_connection_close_and_shutdown_leave_nothing_open():
    before = inet_connections()

    async def body():
        server = LatencyServer(latency=0.01)
        await server.start()
        await get(server, count=2, close=True)
        reader, writer = await asyncio.open_connection(server.host, server.port)  # left open by us
        await asyncio.sleep(0.02)
        await server.close()
        assert await asyncio.wait_for(reader.read(), 2) == b""  # the server closed our connection
        writer.close()
        await writer.wait_closed()

    run(body())
    assert inet_connections() == before


def test_negative_latency_is_refused():
    with pytest.raises(ValueError):
        LatencyServer(latency=-1)


def test_virtual_clock_jumps_to_the_next_wake_up_in_order():
    clock = VirtualClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, delay: float) -> None:
        await clock.sleep(delay)
        woke.append((name, clock.time()))

    async def scenario():
        await asyncio.gather(sleeper("b", 2.0), sleeper("a", 1.0), sleeper("c", 1000.0))
        return clock.time()

    assert run(clock.drive(scenario())) == 1000.0
    assert woke == [("a", 1.0), ("b", 2.0), ("c", 1000.0)]
    assert clock.sleeps == 3


def test_virtual_clock_gives_up_on_work_that_never_ends():
    clock = VirtualClock()

    async def forever():
        await asyncio.Event().wait()

    with pytest.raises(TimeoutError):
        run(clock.drive(forever(), real_timeout=0.2))


def test_hold_keeps_every_answer_until_released():
    async def body():
        gate = asyncio.Event()
        async with LatencyServer(latency=0.0, hold=gate) as server:
            tasks = [asyncio.create_task(get(server)) for _ in range(4)]
            for _ in range(200):
                if server.requests.now == 4:
                    break
                await asyncio.sleep(0.01)
            held = (server.requests.now, sum(t.done() for t in tasks))
            gate.set()
            await asyncio.gather(*tasks)
            return held, server.requests.now

    assert run(body()) == ((4, 0), 0)
