"""Tests for lab_snippets.loopback_http: the latency server and the virtual clock."""

from __future__ import annotations

import asyncio
import contextlib
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


async def exchange(server: LatencyServer, request: bytes) -> bytes:
    """Send one raw request; return everything the server sends until it hangs up (bounded).

    A server that hangs up on a request it has not read whole may reset the connection: that
    also counts as no answer (b"")."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 5)
    except ConnectionResetError:
        return b""
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


def test_headers_are_read_from_the_first_line_after_the_request_line():
    async def body():
        async with LatencyServer(latency=0.0) as server:
            # Connection: close as the first header, and a Host with a port (a colon in the value)
            request = b"GET / HTTP/1.1\r\nConnection: close\r\nHost: 127.0.0.1:80\r\n\r\n"
            reply = await exchange(server, request)
            return reply, server.requests.entered

    reply, entered = run(body())
    assert reply.startswith(b"HTTP/1.1 200 OK") and b"Connection: close\r\n" in reply
    assert reply.endswith(b"\r\n\r\nok") and entered == 1


def test_a_request_head_is_bounded_at_16_kib():
    async def body():
        async with LatencyServer(latency=0.0) as server:
            replies = []
            for size in (8 * 1024, 20 * 1024):
                head = b"GET / HTTP/1.1\r\nX-Pad: " + b"p" * size + b"\r\nConnection: close\r\n\r\n"
                replies.append(await exchange(server, head))
            return replies, server.requests.entered

    (fits, too_big), entered = run(body())
    assert fits.startswith(b"HTTP/1.1 200 OK"), "an 8 KiB head is answered"
    assert too_big == b"" and entered == 1, "a 20 KiB head is refused: the connection is closed unanswered"


def test_close_cancels_an_answer_that_is_still_waiting_and_leaves_no_task():
    async def body():
        before = asyncio.all_tasks()
        server = LatencyServer(latency=30.0)
        await server.start()
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        for _ in range(200):
            if server.requests.now == 1:
                break
            await asyncio.sleep(0.01)
        waiting = server.requests.now
        await server.close()
        eof = await asyncio.wait_for(reader.read(), 2)
        writer.close()
        await writer.wait_closed()
        return waiting, eof, server.requests.now, [t.get_name() for t in asyncio.all_tasks() - before]

    assert run(body()) == (1, b"", 0, []), "the waiting answer is cancelled; handler and watchdog end"


def test_in_flight_average_integrates_the_steps_of_the_window():
    server = LatencyServer()
    server._changes = [(1.0, 1), (3.0, 2), (5.0, 0)]  # (time, requests in flight right after)
    assert server.in_flight_average(0.0, 4.0) == (0 * 1 + 1 * 2 + 2 * 1) / 4, "ends while two are in"
    assert server.in_flight_average(2.0, 6.0) == (1 * 1 + 2 * 2 + 0 * 1) / 4, "starts inside a step"
    with pytest.raises(ValueError):
        server.in_flight_average(1.0, 1.0)


def test_virtual_sleep_of_zero_only_yields_even_without_a_driver():
    clock = VirtualClock()

    async def body():
        await asyncio.wait_for(clock.sleep(0), 2)
        await asyncio.wait_for(clock.sleep(-1), 2)

    run(body())
    assert clock.sleeps == 2 and clock.time() == 0.0


def test_drive_waits_for_the_cancelled_task_to_finish():
    clock = VirtualClock()
    cleaned: list[str] = []

    async def forever():
        try:
            await asyncio.Event().wait()
        finally:
            for _ in range(3):  # cleanup that takes a few turns of the loop
                await asyncio.sleep(0)
            cleaned.append("done")

    async def body():
        with pytest.raises(TimeoutError):
            await clock.drive(forever(), real_timeout=0.2)
        return list(cleaned)  # read at once, before anything else gets a turn

    assert run(body()) == ["done"], "drive returns once the task it cancelled has finished"
