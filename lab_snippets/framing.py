"""Message framing over asyncio Streams, and a small loopback frame server to practise on.

A TCP connection carries bytes, not messages: one ``read()`` may return half a message or
two of them. Framing puts the message boundaries back:

- **length prefix**: a 4-byte big-endian length, then that many bytes
  (``encode_frame`` / ``read_frame``, built on ``readexactly``);
- **delimiter**: the message ends at a delimiter byte string, ``b"\\n"`` by default
  (``encode_line`` / ``read_line``, built on ``readuntil``).

Both readers refuse a frame larger than ``max_size`` (``FrameTooLarge``), report a connection
that ends in the middle of a frame (``TruncatedFrame``), and return ``None`` for a clean end
of stream between frames.

``FrameServer`` is an echo server for experiments, bound to 127.0.0.1 on a free port and
bounded in time and count::

    async with FrameServer(max_frame=1024) as server:
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(encode_frame(b"hello"))
        reply = await read_frame(reader, max_size=1024)      # b"ok:hello"

It answers every well-formed frame with ``ok:<payload>``; a payload that is not UTF-8 gets
``error:malformed`` and the connection stays open; a frame declaring more than ``max_frame``
bytes gets ``error:too large`` and the connection is closed (the rest of the stream cannot be
trusted); a connection that ends mid-frame or stays idle longer than ``idle_timeout`` is
closed. Other connections are served throughout. ``close()`` stops accepting, closes every
connection, and waits for the handlers and the listening socket to finish.
"""

from __future__ import annotations

import asyncio
import struct
from collections import Counter
from collections.abc import Callable

HEADER = struct.Struct(">I")
HOST = "127.0.0.1"
OK_PREFIX = b"ok:"
ERROR_MALFORMED = b"error:malformed"
ERROR_TOO_LARGE = b"error:too large"


class FrameError(Exception):
    """A frame could not be read."""


class FrameTooLarge(FrameError):
    """A frame declares (or reaches) more bytes than the reader allows."""


class TruncatedFrame(FrameError):
    """The stream ended in the middle of a frame."""


def encode_frame(payload: bytes) -> bytes:
    """A length-prefixed frame: 4-byte big-endian length, then the payload."""
    if len(payload) > 0xFFFFFFFF:
        raise FrameTooLarge(f"{len(payload)} bytes do not fit a 4-byte length")
    return HEADER.pack(len(payload)) + payload


def encode_line(payload: bytes, delimiter: bytes = b"\n") -> bytes:
    """A delimited frame; the payload must not contain the delimiter."""
    if delimiter in payload:
        raise ValueError("the payload contains the delimiter")
    return payload + delimiter


async def read_frame(reader: asyncio.StreamReader, max_size: int) -> bytes | None:
    """Read one length-prefixed frame; ``None`` at a clean end of stream between frames."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise TruncatedFrame(f"stream ended after {len(exc.partial)} of {HEADER.size} header bytes") from exc
    (length,) = HEADER.unpack(header)
    if length > max_size:
        raise FrameTooLarge(f"frame declares {length} bytes, the limit is {max_size}")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise TruncatedFrame(f"stream ended after {len(exc.partial)} of {length} payload bytes") from exc


async def read_line(reader: asyncio.StreamReader, max_size: int, delimiter: bytes = b"\n") -> bytes | None:
    """Read one delimited frame (without its delimiter); ``None`` at a clean end of stream.

    ``max_size`` counts the payload; the reader's own buffer limit must be at least
    ``max_size`` (``asyncio.open_connection(..., limit=...)``): ``readuntil`` accepts a
    delimiter that starts at index ``limit``, and refuses one that starts further in.
    """
    try:
        line = await reader.readuntil(delimiter)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise TruncatedFrame(f"stream ended after {len(exc.partial)} bytes without a delimiter") from exc
    except asyncio.LimitOverrunError as exc:
        raise FrameTooLarge(f"no delimiter within the reader's limit ({exc.consumed} bytes seen)") from exc
    payload = line[: -len(delimiter)]
    if len(payload) > max_size:
        raise FrameTooLarge(f"frame has {len(payload)} bytes, the limit is {max_size}")
    return payload


def ok_reply(payload: bytes) -> bytes:
    """The server's default answer to a well-formed frame: ``ok:<payload>``."""
    return OK_PREFIX + payload


class FrameServer:
    """A loopback echo server speaking length-prefixed (or line) frames, for experiments.

    Parameters
    ----------
    framing: ``"length"`` (4-byte prefix) or ``"line"`` (``b"\\n"`` delimiter).
    max_frame: the largest payload accepted, in bytes.
    idle_timeout: a connection that sends nothing for this long is closed.
    max_frames_per_connection: a connection is closed after this many frames.
    max_connections: connections beyond this many (in total) are closed at once.
    lifetime: the server closes itself after this many seconds, whatever happens.
    reply: maps a well-formed payload to the reply payload (default ``ok_reply``).
    reply_chunk, chunk_pause: send each reply in pieces of ``reply_chunk`` bytes with a
        pause between them (to show that a reader may get less than a whole message).
    read_gate: when given, the server reads nothing from a connection until the event is set
        (to show ``drain()`` waiting on a reader that does not read).
    raw_reply: when given, replaces the framed reply with exactly these bytes, and the
        server hangs up after sending them (to make a client see a truncated or oversized reply).
    on_event: called with a short text for every server-side event (e.g. ``Timeline.mark``).
    """

    def __init__(
        self,
        *,
        framing: str = "length",
        max_frame: int = 64 * 1024,
        idle_timeout: float = 2.0,
        max_frames_per_connection: int = 1000,
        max_connections: int = 64,
        lifetime: float = 30.0,
        reply: Callable[[bytes], bytes] = ok_reply,
        reply_chunk: int | None = None,
        chunk_pause: float = 0.0,
        read_gate: asyncio.Event | None = None,
        raw_reply: bytes | None = None,
        on_event: Callable[[str], object] | None = None,
    ) -> None:
        if framing not in ("length", "line"):
            raise ValueError("framing must be 'length' or 'line'")
        self.framing = framing
        self.max_frame = max_frame
        self.idle_timeout = idle_timeout
        self.max_frames_per_connection = max_frames_per_connection
        self.max_connections = max_connections
        self.lifetime = lifetime
        self.reply = reply
        self.reply_chunk = reply_chunk
        self.chunk_pause = chunk_pause
        self.read_gate = read_gate
        self.raw_reply = raw_reply
        self.on_event = on_event
        self.host = HOST
        self.port = 0
        self.stats: Counter[str] = Counter()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._watchdog: asyncio.Task | None = None
        self._next_id = 0

    # -- lifecycle ------------------------------------------------------------------
    async def start(self) -> FrameServer:
        # In line mode the reader's buffer limit is what bounds a frame without a delimiter.
        limit = self.max_frame + 1 if self.framing == "line" else 2**16
        self._server = await asyncio.start_server(self._handle, HOST, 0, limit=limit)
        self.port = self._server.sockets[0].getsockname()[1]
        self._watchdog = asyncio.create_task(self._close_after_lifetime(), name="frame-server-lifetime")
        self._event("listening")
        return self

    async def close(self, timeout: float = 2.0) -> None:
        """Stop accepting, close every connection, wait for handlers and the socket (bounded)."""
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()
        for writer in list(self._writers):
            writer.close()  # a handler blocked in a read sees the end of the stream and returns
        handlers = list(self._handlers)
        if handlers:
            _, still_running = await asyncio.wait(handlers, timeout=min(0.1, timeout / 2))
            for task in still_running:  # waiting on the read gate or pausing between chunks
                task.cancel()
            if still_running:
                await asyncio.wait(still_running, timeout=timeout / 2)
        try:
            await asyncio.wait_for(server.wait_closed(), timeout)
        except TimeoutError:
            pass
        if self._watchdog is not None and self._watchdog is not asyncio.current_task():
            self._watchdog.cancel()
            await asyncio.gather(self._watchdog, return_exceptions=True)
        self._event("closed")

    async def __aenter__(self) -> FrameServer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def serving(self) -> bool:
        return self._server is not None

    # -- internals --------------------------------------------------------------------
    def _event(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(f"server: {text}")

    async def _close_after_lifetime(self) -> None:
        await asyncio.sleep(self.lifetime)
        self._event("lifetime reached")
        self._watchdog = None
        await self.close()

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        if self.reply_chunk:
            for start in range(0, len(data), self.reply_chunk):
                writer.write(data[start : start + self.reply_chunk])
                await writer.drain()
                if start + self.reply_chunk < len(data):
                    await asyncio.sleep(self.chunk_pause)
        else:
            writer.write(data)
            await writer.drain()

    def _frame(self, payload: bytes) -> bytes:
        return encode_frame(payload) if self.framing == "length" else encode_line(payload)

    async def _read(self, reader: asyncio.StreamReader) -> bytes | None:
        async with asyncio.timeout(self.idle_timeout):
            if self.framing == "length":
                return await read_frame(reader, self.max_frame)
            return await read_line(reader, self.max_frame)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._handlers.add(task)
        self._writers.add(writer)
        self._next_id += 1
        conn = f"conn {self._next_id}"
        self.stats["connections"] += 1
        try:
            if self.stats["connections"] > self.max_connections:
                self.stats["refused"] += 1
                self._event(f"{conn} refused (over {self.max_connections} connections)")
                return
            self._event(f"{conn} accepted")
            await self._serve(conn, reader, writer)
        except asyncio.CancelledError:
            # Only close() cancels a handler, and the handler is its connection's top-level
            # task: end it quietly. (Re-raising makes Python 3.11's start_server log a
            # spurious "Exception in callback"; 3.12 fixed that.)
            self._event(f"{conn} cancelled by shutdown")
        except (ConnectionError, OSError) as exc:
            self.stats["connection errors"] += 1
            self._event(f"{conn} {type(exc).__name__}")
        finally:
            self._writers.discard(writer)
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            except (TimeoutError, ConnectionError, OSError, asyncio.CancelledError):
                pass
            self._handlers.discard(task)
            self._event(f"{conn} closed")

    async def _serve(self, conn: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.read_gate is not None:
            await asyncio.wait_for(self.read_gate.wait(), self.lifetime)
            self._event(f"{conn} starts reading")
        for _ in range(self.max_frames_per_connection):
            try:
                payload = await self._read(reader)
            except FrameTooLarge:
                self.stats["oversized"] += 1
                self._event(f"{conn} oversized frame")
                await self._send(writer, self._frame(ERROR_TOO_LARGE))
                return
            except TruncatedFrame:
                self.stats["truncated"] += 1
                self._event(f"{conn} truncated frame")
                return
            except TimeoutError:
                self.stats["idle timeouts"] += 1
                self._event(f"{conn} idle timeout")
                return
            if payload is None:
                self.stats["clean eof"] += 1
                self._event(f"{conn} end of stream")
                return
            self.stats["frames"] += 1
            try:
                payload.decode("utf-8")
            except UnicodeDecodeError:
                self.stats["malformed"] += 1
                self._event(f"{conn} malformed frame")
                await self._send(writer, self._frame(ERROR_MALFORMED))
                continue
            if self.raw_reply is not None:
                await self._send(writer, self.raw_reply)
                self._event(f"{conn} raw reply sent, hanging up")
                return
            await self._send(writer, self._frame(self.reply(payload)))
            self.stats["replies"] += 1
        self._event(f"{conn} frame budget used up")


if __name__ == "__main__":  # pragma: no cover - a manual smoke test

    async def _demo() -> None:
        async with FrameServer() as server:
            reader, writer = await asyncio.open_connection(server.host, server.port)
            try:
                writer.write(encode_frame(b"hello"))
                await writer.drain()
                print(await asyncio.wait_for(read_frame(reader, 1024), 2))
            finally:
                writer.close()
                await writer.wait_closed()

    asyncio.run(_demo())
