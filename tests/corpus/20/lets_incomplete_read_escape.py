# mistake: lets asyncio.IncompleteReadError escape instead of raising TruncatedFrame
# violates: a truncated reply (readexactly raises IncompleteReadError: turn it into TruncatedFrame) must raise TruncatedFrame
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for payload in payloads:
            writer.write(encode_frame(payload))
        await writer.drain()
        replies = []
        for _ in payloads:
            length = int.from_bytes(await reader.readexactly(4), "big")
            if length > max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
            replies.append(await reader.readexactly(length))
        return replies
    finally:
        writer.close()
        await writer.wait_closed()
