# mistake: cleanup in `except Exception` + after the loop, so CancelledError (a BaseException) skips it (red team, issue 28)
# violates: fetch_replies returned after its caller cancelled it
# breaks: close() and wait_closed() on every path (a cancelled caller leaves the connection open)
# how: cleanup in `except Exception` + after the loop, so CancelledError (a BaseException) skips it
import struct


async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for payload in payloads:
            writer.write(encode_frame(payload))
        await writer.drain()
        replies = []
        for _ in payloads:
            try:
                header = await reader.readexactly(4)
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("connection ended before a reply header") from exc
            (length,) = struct.unpack(">I", header)
            if length > max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, limit {max_reply}")
            try:
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("connection ended inside a reply") from exc
    except Exception:
        writer.close()
        await writer.wait_closed()
        raise
    writer.close()
    await writer.wait_closed()
    return replies
