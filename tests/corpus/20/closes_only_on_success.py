# mistake: closes the connection after the last reply, with no finally, so an error path leaves it open
# violates: still open when fetch_replies returned after FrameTooLarge
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    for payload in payloads:
        writer.write(encode_frame(payload))
    await writer.drain()
    replies = []
    for _ in payloads:
        try:
            header = await reader.readexactly(4)
            length = int.from_bytes(header, "big")
            if length > max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
            replies.append(await reader.readexactly(length))
        except asyncio.IncompleteReadError as exc:
            raise TruncatedFrame("the connection ended before the reply did") from exc
    writer.close()
    await writer.wait_closed()
    return replies
