# mistake: write() and drain() sit before the try/finally, so a drain cancelled by the caller leaves the socket open (red team, issue 28)
# violates: a peer that had stopped reading
# breaks: close() and wait_closed() on every path (a peer that stops reading, then the caller gives up)
# how: write()+drain() sit before the try/finally, so a drain cancelled by the caller's timeout leaks the socket
import struct


async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    for payload in payloads:
        writer.write(encode_frame(payload))
    await writer.drain()
    try:
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
        return replies
    finally:
        writer.close()
        await writer.wait_closed()
