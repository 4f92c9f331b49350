import asyncio
import runpy

import psutil
import pytest

from lab_snippets import framing
from lab_snippets.framing import (
    ERROR_MALFORMED,
    ERROR_TOO_LARGE,
    FrameServer,
    FrameTooLarge,
    TruncatedFrame,
    encode_frame,
    encode_line,
    read_frame,
    read_line,
)


def run(coro, timeout=5):
    async def bounded():
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def fed_reader(data: bytes, eof: bool = True, limit: int = 2**16) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=limit)
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return reader


async def connect(server: FrameServer, limit: int = 2**16):
    return await asyncio.open_connection(server.host, server.port, limit=limit)


async def close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await asyncio.wait_for(writer.wait_closed(), 2)
    except (ConnectionError, OSError):
        pass


def open_inet_sockets() -> int:
    return len([c for c in psutil.Process().net_connections("inet") if c.status != psutil.CONN_NONE])


# -- the readers on their own ---------------------------------------------------------
def test_read_frame_splits_a_stream_into_frames():
    async def body():
        reader = fed_reader(encode_frame(b"one") + encode_frame(b"") + encode_frame(b"three"))
        return [await read_frame(reader, 10) for _ in range(4)]

    assert run(body()) == [b"one", b"", b"three", None]


def test_read_frame_refuses_an_oversized_declaration_without_reading_it():
    async def body():
        reader = fed_reader(encode_frame(b"x" * 11), eof=False)
        with pytest.raises(FrameTooLarge):
            await read_frame(reader, 10)

    run(body())


@pytest.mark.parametrize("cut", [2, 4, 6])
def test_read_frame_reports_truncation(cut):
    async def body():
        with pytest.raises(TruncatedFrame):
            await read_frame(fed_reader(encode_frame(b"abcdef")[:cut]), 10)

    run(body())


def test_read_line_frames_and_limits():
    async def body():
        reader = fed_reader(encode_line(b"a") + encode_line(b"bc"))
        got = [await read_line(reader, 5), await read_line(reader, 5), await read_line(reader, 5)]
        with pytest.raises(TruncatedFrame):
            await read_line(fed_reader(b"no end"), 10)
        with pytest.raises(FrameTooLarge):
            await read_line(fed_reader(b"y" * 40 + b"\n", limit=8), 7)
        with pytest.raises(FrameTooLarge):
            await read_line(fed_reader(b"y" * 6 + b"\n"), 5)
        return got

    assert run(body()) == [b"a", b"bc", None]


def test_encode_line_rejects_a_payload_with_the_delimiter():
    with pytest.raises(ValueError):
        encode_line(b"a\nb")


# -- the server -------------------------------------------------------------------------
def test_server_echoes_frames_and_cleans_up():
    before = open_inet_sockets()

    async def body():
        async with FrameServer(max_frame=100) as server:
            assert server.host == "127.0.0.1" and server.port > 0
            reader, writer = await connect(server)
            try:
                for word in (b"alpha", b"beta"):
                    writer.write(encode_frame(word))
                    await writer.drain()
                replies = [await read_frame(reader, 100) for _ in range(2)]
            finally:
                await close_writer(writer)
            await asyncio.sleep(0.05)
            return replies, dict(server.stats)

    replies, stats = run(body())
    assert replies == [b"ok:alpha", b"ok:beta"]
    assert stats["replies"] == 2 and stats["clean eof"] == 1
    assert open_inet_sockets() == before


def test_server_survives_bad_clients_while_serving_a_good_one():
    async def bad_clients(server):
        # malformed: error reply, connection kept
        r1, w1 = await connect(server)
        w1.write(encode_frame(b"\xff\xfe") + encode_frame(b"fine"))
        malformed = [await read_frame(r1, 100), await read_frame(r1, 100)]
        await close_writer(w1)
        # oversized: error reply, then the server hangs up
        r2, w2 = await connect(server)
        w2.write(encode_frame(b"z" * 500))
        oversized = [await read_frame(r2, 100), await read_frame(r2, 100)]
        await close_writer(w2)
        # truncated: the server just hangs up
        r3, w3 = await connect(server)
        w3.write(encode_frame(b"abcdef")[:7])
        w3.write_eof()
        truncated = await read_frame(r3, 100)
        await close_writer(w3)
        return malformed, oversized, truncated

    async def good_client(server):
        reader, writer = await connect(server)
        try:
            replies = []
            for n in range(5):
                writer.write(encode_frame(f"msg {n}".encode()))
                await writer.drain()
                replies.append(await read_frame(reader, 100))
                await asyncio.sleep(0.01)
            return replies
        finally:
            await close_writer(writer)

    async def body():
        async with FrameServer(max_frame=100) as server:
            results = await asyncio.gather(bad_clients(server), good_client(server))
            await asyncio.sleep(0.05)
            return results, dict(server.stats)

    (bad, good), stats = run(body())
    malformed, oversized, truncated = bad
    assert malformed == [ERROR_MALFORMED, b"ok:fine"]
    assert oversized == [ERROR_TOO_LARGE, None]
    assert truncated is None
    assert good == [f"ok:msg {n}".encode() for n in range(5)]
    assert stats["malformed"] == 1 and stats["oversized"] == 1 and stats["truncated"] == 1


def test_line_server_and_idle_timeout():
    async def body():
        async with FrameServer(framing="line", max_frame=10, idle_timeout=0.05) as server:
            reader, writer = await connect(server)
            try:
                writer.write(b"hi\n" + b"q" * 30 + b"\n")
                first = await read_line(reader, 100)
                second = await read_line(reader, 100)
                third = await read_line(reader, 100)
            finally:
                await close_writer(writer)
            idle_reader, idle_writer = await connect(server)
            try:
                idle = await asyncio.wait_for(idle_reader.read(100), 1)
            finally:
                await close_writer(idle_writer)
            await asyncio.sleep(0.02)
            return first, second, third, idle, dict(server.stats)

    first, second, third, idle, stats = run(body())
    assert (first, second, third) == (b"ok:hi", ERROR_TOO_LARGE, None)
    assert idle == b"" and stats["idle timeouts"] == 1


def test_dribbled_replies_arrive_in_pieces_and_read_frame_reassembles_them():
    async def body():
        async with FrameServer(reply_chunk=3, chunk_pause=0.01) as server:
            reader, writer = await connect(server)
            try:
                writer.write(encode_frame(b"abcdefgh"))
                first_read = await reader.read(1024)
                rest = await reader.readexactly(len(encode_frame(b"ok:abcdefgh")) - len(first_read))
                return first_read, await read_frame(fed_reader(first_read + rest), 100)
            finally:
                await close_writer(writer)

    first_read, reassembled = run(body())
    assert len(first_read) < 4 + len(b"ok:abcdefgh")
    assert reassembled == b"ok:abcdefgh"


def test_read_gate_holds_the_server_and_close_cancels_waiting_handlers():
    async def body():
        gate = asyncio.Event()
        events: list[str] = []
        server = await FrameServer(read_gate=gate, on_event=events.append).start()
        try:
            reader, writer = await connect(server)
            writer.write(encode_frame(b"wait"))
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(read_frame(reader, 100), 0.05)
        finally:
            await server.close()
        eof = await asyncio.wait_for(reader.read(10), 1)
        await close_writer(writer)
        return eof, events, server.serving

    eof, events, serving = run(body())
    assert eof == b"" and not serving
    assert "server: conn 1 cancelled by shutdown" in events and events[-1] == "server: closed"


def test_raw_reply_and_connection_limit_and_lifetime():
    async def body():
        async with FrameServer(raw_reply=encode_frame(b"0123456789")[:8], max_connections=1) as server:
            reader, writer = await connect(server)
            writer.write(encode_frame(b"x"))
            with pytest.raises(TruncatedFrame):
                await read_frame(reader, 100)
            await close_writer(writer)
            r2, w2 = await connect(server)
            refused = await asyncio.wait_for(r2.read(10), 1)
            await close_writer(w2)
        short = FrameServer(lifetime=0.05)
        await short.start()
        await asyncio.sleep(0.2)
        return refused, server.stats["refused"], short.serving

    refused, refused_count, short_serving = run(body())
    assert refused == b"" and refused_count == 1
    assert short_serving is False


def test_a_reply_in_chunks_pauses_between_them_only(monkeypatch):
    pauses: list[float] = []
    written: list[bytes] = []

    class Writer:
        def write(self, data):
            written.append(data)

        async def drain(self):
            pass

    async def sleep(delay):
        pauses.append(delay)

    monkeypatch.setattr(framing.asyncio, "sleep", sleep)
    server = FrameServer(reply_chunk=3, chunk_pause=0.5)
    for size, pieces in [(8, 3), (9, 3), (3, 1), (1, 1)]:
        written.clear()
        pauses.clear()
        asyncio.run(server._send(Writer(), bytes(range(size))))
        assert b"".join(written) == bytes(range(size)) and len(written) == pieces
        assert pauses == [0.5] * (pieces - 1), f"{size} bytes: a pause between chunks, none after the last"


def test_the_default_server_refuses_a_frame_over_64_kib():
    async def body():
        async with FrameServer() as server:
            reader, writer = await connect(server)
            try:
                writer.write(encode_frame(b"k" * 64 * 1024))
                writer.write(framing.HEADER.pack(64 * 1024 + 1))  # declared, never sent
                return [await read_frame(reader, 2**17), await read_frame(reader, 100)]
            finally:
                await close_writer(writer)

    big, refused = run(body())
    assert big == b"ok:" + b"k" * 64 * 1024 and refused == ERROR_TOO_LARGE


def test_a_line_server_takes_a_line_of_max_frame_bytes_and_refuses_one_more():
    async def body():
        async with FrameServer(framing="line", max_frame=10) as server:
            got = []
            for payload in (b"x" * 10, b"y" * 11):
                reader, writer = await connect(server)
                try:
                    writer.write(encode_line(payload))
                    got.append(await read_line(reader, 100))
                finally:
                    await close_writer(writer)
            return got

    assert run(body()) == [b"ok:" + b"x" * 10, ERROR_TOO_LARGE]


def test_close_leaves_no_task_behind():
    async def body():
        before = asyncio.all_tasks()
        async with FrameServer(lifetime=30) as server:
            reader, writer = await connect(server)
            writer.write(encode_frame(b"hi"))
            assert await read_frame(reader, 100) == b"ok:hi"
            await close_writer(writer)
        return [t.get_name() for t in asyncio.all_tasks() - before]

    assert run(body()) == [], "the lifetime watchdog ends with the server"


def test_importing_the_module_runs_nothing_and_running_it_echoes(capsys):
    runpy.run_path(framing.__file__, run_name="lab_snippets.framing")
    assert capsys.readouterr().out == "", "an import starts no server"
    runpy.run_path(framing.__file__, run_name="__main__")
    assert capsys.readouterr().out == "b'ok:hello'\n"
