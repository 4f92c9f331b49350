# mistake: reads the whole body first and only then compares its length with max_reply
# violates: check it before reading the body
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
                body = await reader.readexactly(int.from_bytes(header, "big"))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("the connection ended before the reply did") from exc
            if len(body) > max_reply:
                raise FrameTooLarge(f"reply has {len(body)} bytes, the limit is {max_reply}")
            replies.append(body)
        return replies
    finally:
        writer.close()
        await writer.wait_closed()
