# mistake: reads each reply with a single read() and slices it, assuming a whole frame arrives at once
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
            data = await reader.read(4 + max_reply)
            if len(data) < 4:
                raise TruncatedFrame("the connection ended before the reply did")
            length = int.from_bytes(data[:4], "big")
            if length > max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
            replies.append(data[4:4 + length])
        return replies
    finally:
        writer.close()
        await writer.wait_closed()
