# mistake: reads the header with readexactly but the body with read(length), which may return less
# violates: arrived a few bytes at a time were not read whole
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
                raise TruncatedFrame("the connection ended before the reply did") from exc
            length = int.from_bytes(header, "big")
            if length > max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
            body = await reader.read(length)
            if len(body) == 0:
                raise TruncatedFrame("the connection ended before the reply did")
            replies.append(body)
        return replies
    finally:
        writer.close()
        await writer.wait_closed()
