# mistake: compares with >= instead of > (red team, issue 28)
# violates: a reply of exactly max_reply bytes raised FrameTooLarge
# breaks: FrameTooLarge only when a header declares MORE than max_reply bytes (a reply of exactly max_reply bytes is allowed)
# how: compares with >= instead of >
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
            if length >= max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, limit {max_reply}")
            try:
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("connection ended inside a reply") from exc
        return replies
    finally:
        writer.close()
        await writer.wait_closed()
